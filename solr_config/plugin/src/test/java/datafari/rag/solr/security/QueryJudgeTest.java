package datafari.rag.solr.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.util.Utils;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The door judges what Solr will run: every form of the yes/no oracle ("does a document I may not
 * read hold this term?") — macros, escapes, magic fields, parser defaults — is refused with a 400
 * on the secured handlers, while the same request on a handler without the door answers differently
 * for a term only an unreadable document holds and for an absent one (the control: the oracle is
 * real). The term-level queries a search page needs keep working.
 */
public class QueryJudgeTest extends SecuredCoreTestCase {
  private static final String SECRET = "zebraquartz";
  private static final String ABSENT = "yakmolybdenum";
  private static final String JOIN = "{!join from=language to=language}content:TERM";

  @BeforeClass
  public static void beforeClass() throws Exception {
    initSecuredCore();
    assertU(
        adoc(
            "id",
            "pub",
            "title",
            "Canteen",
            "content",
            "the canteen menu",
            "language",
            "en",
            "size",
            "3"));
    assertU(
        adoc(
            "id",
            "near",
            "title",
            "Near",
            "content",
            "zebraquarty shelf",
            "language",
            "de",
            "size",
            "7"));
    for (String id : List.of("secret", "secret2")) {
      assertU(
          adoc(
              "id",
              id,
              "title",
              "Board memo",
              "content",
              "the code word is " + SECRET,
              "language",
              "en",
              "allow_token_document",
              "hr"));
    }
    assertU(
        adoc(
            "id",
            "staff",
            "title",
            "Rota",
            "content",
            "staff rota and canteen",
            "language",
            "fr",
            "allow_token_document",
            "staff"));
    assertU(commit());
  }

  /**
   * Solr's answer as text, QTime and the echoed parameters left out; anonymous unless {@code
   * principal}.
   */
  @SuppressWarnings("unchecked")
  private static String answer(String handler, String principal, String... params)
      throws Exception {
    Map<String, Object> parsed = search(handler, principal, params);
    Map<String, Object> header = (Map<String, Object>) parsed.get("responseHeader");
    header.remove("QTime");
    header.remove("params");
    return Utils.toJSONString(parsed);
  }

  private static String[] with(String term, String... params) {
    String[] out = new String[params.length];
    for (int i = 0; i < params.length; i++) {
      out[i] = params[i].replace("TERM", term);
    }
    return out;
  }

  /** Each form of the oracle as an anonymous client sends it; TERM is the word looked for. */
  static final List<String[]> ORACLES =
      List.of(
          // macros: Solr expands them after the client's text is read
          new String[] {"q", "*:*", "fq", "${m}", "m", JOIN},
          new String[] {"q", "*:*", "fq", "${_}", "_", JOIN},
          new String[] {"q", "*:*", "fq", "${rid}", "rid", JOIN},
          new String[] {"q", "*:*", "fq", "${version}", "version", JOIN},
          new String[] {"q", "*:*", "fq", "${shard.url}", "shard.url", JOIN},
          new String[] {"q", "*:*", "fq", "${f__terms}", "f__terms", JOIN},
          new String[] {
            "q", "*:*", "fq", "${AuthenticatedUserName}", "AuthenticatedUserName", JOIN
          },
          new String[] {"q", "*:*", "facet", "true", "facet.query", "${_}", "_", JOIN},
          new String[] {"q", "${x}", "x", JOIN, "defType", "lucene"},
          new String[] {
            "q", "*:*", "f${y}", "{!join from=language to=language}content:TERM", "y", "q"
          },
          // escapes and magic fields: Lucene's parser decodes \\uXXXX and \\x in fields and terms
          new String[] {
            "q",
            "*:*",
            "fq",
            "\\u005fquery_:\"\\u007b!join from=language to=language}content:TERM\""
          },
          new String[] {
            "q", "*:*", "fq", "_qu\\ery_:\"{!join from=language to=language}content:TERM\""
          },
          new String[] {
            "q", "*:*", "fq", "\\_query\\_:\"{!join from=language to=language}content:TERM\""
          },
          new String[] {
            "q",
            "*:*",
            "facet",
            "true",
            "facet.query",
            "\\u005fquery_:\"{!join from=language to=language}content:TERM\""
          },
          new String[] {
            "defType",
            "lucene",
            "q",
            "\\u005fquery_:\"{!join from=language to=language}content:TERM\""
          },
          new String[] {
            "q", "*:*", "fq", "language:en AND {!join from=language to=language}content:TERM"
          },
          new String[] {"q", "*:*", "fq", " {!join from=language to=language}content:TERM"},
          // the parser's defaults: the field of unfielded terms
          new String[] {
            "defType", "lucene", "df", "_val_", "q", "\"docfreq(content,'TERM')\"", "fl", "id,score"
          },
          new String[] {
            "defType", "lucene", "q", "_val_:\"docfreq(content,'TERM')\"", "fl", "id,score"
          });

  @Test
  public void everyFormOfTheOracleIsRefusedWhereItIsRealWithoutTheDoor() throws Exception {
    for (String[] form : ORACLES) {
      String label = String.join(" ", form);
      // the control: without the door the answer tells a term of an unreadable document from an
      // absent one
      String secret = answerOrError("/unguarded", with(SECRET, form));
      String absent = answerOrError("/unguarded", with(ABSENT, form));
      assertNotEquals("no oracle without the door: " + label, secret, absent);
      for (String handler : List.of("/select", "/lucene")) {
        for (String principal : new String[] {null, "bob"}) {
          for (String term : List.of(SECRET, ABSENT)) {
            SolrException refused =
                expectThrows(
                    SolrException.class, () -> answer(handler, principal, with(term, form)));
            assertEquals(label + " on " + handler, 400, refused.code());
            assertTrue(label + ": " + refused.getMessage(), refused.getMessage().startsWith("'"));
          }
        }
      }
    }
  }

  private static String answerOrError(String handler, String... params) {
    try {
      return answer(handler, null, params);
    } catch (Exception e) {
      return "error: " + e.getMessage();
    }
  }

  @Test
  public void aMacroIsRefusedWhateverItExpandsTo() throws Exception {
    SolrException refused =
        expectThrows(
            SolrException.class,
            () -> answer("/select", null, "q", "*:*", "fq", "${m}", "m", "language:en"));
    assertTrue(refused.getMessage(), refused.getMessage().contains("macro"));
  }

  @Test
  public void anAclFieldIsNeverQueriedHoweverItIsWritten() throws Exception {
    // the control: without the door a reader learns the tokens of what it may read
    String[] staff = {"q", "*:*", "fq", "\\u0061llow_token_document:staff"};
    String[] hr = {"q", "*:*", "fq", "\\u0061llow_token_document:hr"};
    assertNotEquals(answer("/unguarded", "bob", staff), answer("/unguarded", "bob", hr));
    for (String field :
        List.of(
            "\\u0061llow_token_document",
            "allow\\_token\\_document",
            "Allow_Token_Document",
            "deny_token_share")) {
      SolrException refused =
          expectThrows(
              SolrException.class,
              () -> answer("/select", "bob", "q", "*:*", "fq", field + ":staff"));
      assertEquals(400, refused.code());
    }
    SolrException refused =
        expectThrows(
            SolrException.class,
            () -> answer("/lucene", "bob", "q", "\\u0061llow_token_document:*"));
    assertTrue(refused.getMessage(), refused.getMessage().contains("access-control field"));
  }

  @Test
  public void fuzzyQueriesAreRefusedTheirScoresCountUnreadableDocuments() throws Exception {
    // the control: a fuzzy query scores a readable document by the frequency of a near term that
    // only unreadable documents hold, so its score differs from the plain term's
    String fuzzy = answer("/unguarded", null, "q", "content:zebraquarty~1", "fl", "id,score");
    String plain = answer("/unguarded", null, "q", "content:zebraquarty", "fl", "id,score");
    assertTrue(fuzzy, fuzzy.contains("\"near\""));
    assertNotEquals(plain, fuzzy);
    SolrException refused =
        expectThrows(
            SolrException.class, () -> answer("/select", null, "q", "content:zebraquarty~1"));
    assertTrue(refused.getMessage(), refused.getMessage().contains("fuzzy"));
  }

  /**
   * Term-level queries a search page needs: accepted, and answered from readable documents only.
   */
  static final List<String[]> ACCEPTED =
      List.of(
          new String[] {"q", "canteen"},
          new String[] {"q", "content:canteen"},
          new String[] {"q", "\"canteen menu\""},
          new String[] {"q", "content:\"staff rota\"~3"},
          new String[] {"q", "content:cant*"},
          new String[] {"q", "content:can?een"},
          new String[] {"q", "content:/cant.*/"},
          new String[] {"q", "size:[1 TO 10]"},
          new String[] {"q", "id:[a TO z]"},
          new String[] {"q", "title:*"},
          new String[] {"q", "*:*"},
          new String[] {"q", "(canteen AND menu) OR -staff"},
          new String[] {"q", "content:canteen^2 OR title:rota"},
          new String[] {"q", "filter(language:en) canteen"},
          new String[] {"q", "c\\u0061nteen"},
          new String[] {"q", "*:*", "fq", "{!tag=lang}language:(en OR fr)"},
          new String[] {
            "q",
            "*:*",
            "fq",
            "size:[* TO 5]",
            "facet",
            "true",
            "facet.query",
            "{!key=small ex=lang}size:[* TO 5]"
          },
          new String[] {"q", "*:*", "hl", "true", "hl.fl", "content", "hl.q", "canteen"},
          new String[] {"q", "*:*", "sort", "size desc,id asc", "fl", "id,s:size,score"},
          new String[] {"q", "*:*", "defType", "dismax", "qf", "content title"});

  @Test
  public void termLevelQueriesAreAcceptedAndAnsweredFromReadableDocumentsOnly() throws Exception {
    for (String[] form : ACCEPTED) {
      for (String handler : List.of("/select", "/lucene")) {
        String text = answer(handler, null, form);
        assertFalse(
            String.join(" ", form) + ": " + text, text.contains("secret") || text.contains(SECRET));
        assertTrue(text, text.contains("\"numFound\""));
      }
    }
    String canteen = answer("/select", "bob", "q", "canteen", "fl", "id");
    assertTrue(canteen, canteen.contains("\"pub\"") && canteen.contains("\"staff\""));
  }

  @Test
  public void anEdismaxQueryIsJudgedAsSolrParsedItOrUpFrontWithoutTheSecondHalf() throws Exception {
    for (String handler : List.of("/select", "/upfront")) {
      for (String q :
          List.of(
              "content:zebraquarty~1",
              "allow_token_document:hr",
              "canteen AND content:zebraquarty~2")) {
        SolrException refused =
            expectThrows(SolrException.class, () -> answer(handler, null, "q", q));
        assertEquals(handler + " " + q, 400, refused.code());
      }
      String found = answer(handler, null, "q", "canteen menu", "fl", "id");
      assertTrue(found, found.contains("\"pub\"") && !found.contains("secret"));
    }
  }

  @Test
  public void everyRefusalIsA400NeverA500() throws Exception {
    List<String[]> broken = new ArrayList<>();
    broken.add(new String[] {"defType", "lucene", "q", "content:(unbalanced"});
    broken.add(new String[] {"defType", "lucene", "q", "nosuchfield:x"});
    broken.add(new String[] {"q", "*:*", "fq", "{!tag=a"});
    broken.add(new String[] {"q", "*:*", "fq", "{!tag='a b'}x"});
    broken.add(new String[] {"q", "*:*", "fq", "{!tag=$q}x"});
    broken.add(new String[] {"q", "*:*", "fq", "size:[1 TO x]"});
    broken.add(new String[] {"q", "*:*", "sort", "nosuchfield asc"});
    broken.add(new String[] {"q", "*:*", "fl", "id,x:nosuchfield"});
    broken.add(new String[] {"q", "*:*", "fq", "_version_:[* TO *]"});
    broken.add(new String[] {"q", "*:*", "fq", "_root_:x"});
    for (String[] form : broken) {
      SolrException refused =
          expectThrows(SolrException.class, () -> answer("/lucene", null, form));
      assertEquals(String.join(" ", form), 400, refused.code());
    }
  }
}
