package datafari.rag.solr.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.lucene.search.Query;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.util.Utils;
import org.apache.solr.request.LocalSolrQueryRequest;
import org.apache.solr.request.SolrQueryRequest;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The secured /select on a real core: the security filter as each kind of caller sees it, and the
 * parameter guard refusing every family that would evaluate a query outside the user's documents —
 * while the same families on a handler without the guard do leak (the control).
 */
public class SecureSearchComponentTest extends SecuredCoreTestCase {
  private static final String SECRET = "zebraquartz";

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
            "source",
            "a"));
    assertU(
        adoc(
            "id",
            "secret",
            "title",
            "Board memo",
            "content",
            "the code word is " + SECRET,
            "language",
            "en",
            "source",
            "board",
            "allow_token_document",
            "hr"));
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
            "source",
            "board",
            "allow_token_document",
            "staff"));
    assertU(
        adoc(
            "id",
            "nocontractors",
            "title",
            "Payroll",
            "content",
            "payroll for staff",
            "language",
            "en",
            "source",
            "pay",
            "allow_token_share",
            "staff",
            "allow_token_document",
            "staff",
            "deny_token_document",
            "contractors"));
    assertU(commit());
  }

  @SuppressWarnings("unchecked")
  private static Set<String> ids(Map<String, Object> answer) {
    Set<String> ids = new TreeSet<>();
    for (Object doc : (List<Object>) ((Map<String, Object>) answer.get("response")).get("docs")) {
      ids.add((String) ((Map<String, Object>) doc).get("id"));
    }
    return ids;
  }

  /** The filter {@code {!manifoldCFSecurity}} makes for a request of {@code principal}. */
  private static Query filterOf(String principal, String... params) throws Exception {
    SolrQueryRequest req = req(params);
    ((LocalSolrQueryRequest) req).setUserPrincipalName(principal);
    try {
      return h.getCore()
          .getQueryPlugin(ManifoldCFSecurityQParserPlugin.NAME)
          .createParser("", null, req.getParams(), req)
          .parse();
    } finally {
      req.close();
    }
  }

  @Test
  public void theSameTokensShareOneFilterAndOtherTokensHaveTheirOwn() throws Exception {
    Query alice = filterOf("alice");
    assertSame("built once per set of tokens", alice, filterOf("alice"));
    // the service account naming alice: the same tokens, the same filter
    assertSame(alice, filterOf("datafari-rag", "AuthenticatedUserName", "alice"));
    Query bob = filterOf("bob");
    assertNotEquals(alice, bob);
    assertEquals(
        ManifoldCFSecurityQParserPlugin.filter(Set.of("staff", "datafari-rag-user:bob")), bob);
    // a group's tokens are the user's too: a different set, a different filter
    Query board =
        filterOf("datafari-rag", "AuthenticatedUserName", "bob", "AuthenticatedUserGroup", "board");
    assertNotEquals(bob, board);
    assertEquals(ManifoldCFSecurityQParserPlugin.filter(Set.of()), filterOf(null));
  }

  @Test
  public void eachCallerSeesWhatItsUserMayRead() throws Exception {
    assertEquals(Set.of("pub"), ids(search("/select", null, "q", "*:*", "fl", "id")));
    // the service account names the user (and groups); anyone else is filtered as itself
    assertEquals(
        Set.of("pub", "secret", "staff", "nocontractors"),
        ids(
            search(
                "/select",
                "datafari-rag",
                "q",
                "*:*",
                "fl",
                "id",
                "AuthenticatedUserName",
                "alice")));
    assertEquals(
        Set.of("pub", "staff", "nocontractors"),
        ids(search("/select", "bob", "q", "*:*", "fl", "id", "AuthenticatedUserName", "alice")));
    assertEquals(
        Set.of("pub", "staff"),
        ids(
            search(
                "/select",
                "datafari-rag",
                "q",
                "*:*",
                "fl",
                "id",
                "AuthenticatedUserName",
                "dora")));
    assertEquals(
        Set.of("pub", "secret"),
        ids(
            search(
                "/select",
                "datafari-rag",
                "q",
                "*:*",
                "fl",
                "id",
                "AuthenticatedUserName",
                "eve",
                "AuthenticatedUserGroup",
                "board")));
    assertEquals(Set.of("pub"), ids(search("/select", null, "q", "*:*", "fl", "id", "fq", "*:*")));
  }

  @Test
  public void aDocumentPrivateToAUserIsReadByThatUserOnly() throws Exception {
    String own = UserTokens.OWN_TOKEN + "alice";
    assertU(adoc("id", "upload", "title", "Mine", "allow_token_document", own));
    assertU(commit());
    try {
      String[] byId = {"q", "id:upload"};
      assertEquals(Set.of("upload"), ids(search("/select", "alice", byId)));
      assertEquals(Set.of("upload"), ids(named("alice", byId)));
      assertEquals(Set.of(), ids(named("dora", byId)));
      assertEquals(
          Set.of(),
          ids(search("/select", "bob", "q", "id:upload", "AuthenticatedUserName", "alice")));
      assertEquals(Set.of(), ids(search("/select", null, byId)));
    } finally {
      assertU(delI("upload"));
      assertU(commit());
    }
  }

  /** The service account's search for {@code user}. */
  private static Map<String, Object> named(String user, String... params) throws Exception {
    String[] all = java.util.Arrays.copyOf(params, params.length + 2);
    all[params.length] = "AuthenticatedUserName";
    all[params.length + 1] = user;
    return search("/select", "datafari-rag", all);
  }

  @Test
  public void theGrammarDatafariUiUsesWorksForAnyCaller() throws Exception {
    Map<String, Object> answer =
        search(
            "/select",
            "bob",
            "q",
            "canteen OR staff",
            "fq",
            "{!tag=lang}language:(en OR fr)",
            "facet",
            "true",
            "facet.field",
            "{!ex=lang key=ids}id",
            "facet.query",
            "{!key=all}*:*",
            "hl",
            "true",
            "hl.fl",
            "content",
            "fl",
            "*,score",
            "sort",
            "score desc",
            "rows",
            "20");
    assertEquals(Set.of("pub", "staff", "nocontractors"), ids(answer));
    String text = Utils.toJSONString(answer);
    assertFalse(text, text.contains("allow_token") || text.contains("deny_token"));
    assertFalse(text, text.contains("secret"));
    assertTrue(text, text.contains("\"ids\""));
  }

  @Test
  public void aFieldFacetCountsOnlyReadableValues() throws Exception {
    String guarded =
        Utils.toJSONString(
            search("/select", null, "q", "*:*", "facet", "true", "facet.field", "id"));
    assertFalse(guarded, guarded.contains("secret"));
    // the control: Solr's default mincount of 0 lists the id of a document anonymous may not read
    String open =
        Utils.toJSONString(
            search("/unguarded", null, "q", "*:*", "facet", "true", "facet.field", "id"));
    assertTrue(open, open.contains("secret"));
  }

  @Test
  public void idsReturnOnlyReadableDocuments() throws Exception {
    assertEquals(Set.of("pub"), ids(search("/select", null, "ids", "secret,pub", "fl", "id")));
    assertEquals(
        Set.of("pub"), ids(search("/select", "bob", "ids", "secret,pub", "fl", "id,title")));
    assertEquals(
        Set.of("secret"), ids(search("/select", "datafari-rag", "ids", "secret", "fl", "id")));
    // the control: Solr serves ids without looking at the filters
    assertEquals(Set.of("secret"), ids(search("/unguarded", null, "ids", "secret", "fl", "id")));
  }

  /** Every family of the issue, each as a direct client would send it. */
  static final List<String[]> ATTACKS =
      List.of(
          new String[] {"fq", "{!collapse field=source}", "expand", "true", "expand.q", "*:*"},
          new String[] {"fl", "id,x:[subquery]", "x.q", "*:*"},
          new String[] {"fl", "id,[child]"},
          new String[] {"fl", "id,[explain]"},
          new String[] {"fl", "id,d:docfreq(content,'" + SECRET + "')"},
          new String[] {"sort", "termfreq(content,'" + SECRET + "') desc"},
          new String[] {"terms", "true", "terms.fl", "content"},
          new String[] {"facet", "true", "facet.field", "title", "facet.mincount", "0"},
          new String[] {"facet", "true", "facet.field", "title", "f.title.facet.mincount", "0"},
          new String[] {"json.facet", "{x:{type:terms,field:id,domain:{query:'*:*'}}}"},
          new String[] {"json", "{query:'*:*'}"},
          new String[] {"debug", "true"},
          new String[] {"debugQuery", "true", "explainOther", "id:secret"},
          new String[] {"fq", "{!join from=language to=language v=$jq}", "jq", "content:" + SECRET},
          new String[] {
            "defType", "lucene", "q", "{!join from=language to=language}content:" + SECRET
          },
          new String[] {
            "defType", "lucene", "q", "_query_:\"{!join from=language to=language}id:secret\""
          },
          new String[] {"defType", "lucene", "q", "_val_:\"docfreq(content,'" + SECRET + "')\""},
          new String[] {"fq", "{!frange l=1}docfreq(content,'" + SECRET + "')"},
          new String[] {"defType", "lucene", "q", "{!graph from=language to=language}id:secret"},
          new String[] {"defType", "func", "q", "docfreq(content,'" + SECRET + "')"},
          new String[] {"mlt", "true", "mlt.fl", "content"},
          new String[] {"spellcheck", "true", "spellcheck.q", SECRET},
          new String[] {"stats", "true", "stats.field", "id"},
          new String[] {"group", "true", "group.field", "language"},
          new String[] {"rq", "{!rerank reRankQuery=$r}", "r", "content:" + SECRET},
          new String[] {"bq", "content:" + SECRET},
          new String[] {"boost", "termfreq(content,'" + SECRET + "')"},
          new String[] {"shards.qt", "/internal"},
          new String[] {"qt", "/internal"},
          new String[] {"collection", "collection1"},
          new String[] {"useParams", "p"},
          new String[] {"defType", "lucene", "q", "allow_token_document:hr"},
          new String[] {"defType", "lucene", "q", "allow\\_token\\_document:hr"},
          new String[] {"fq", "deny_token_document:contractors"},
          new String[] {"facet", "true", "facet.query", "allow_token_document:staff"},
          new String[] {"fl", "id,allow_token_document"},
          new String[] {"fl", "id,a:allow_token_share"},
          new String[] {"sort", "allow_token_document asc"},
          new String[] {"facet", "true", "facet.field", "allow_token_document"},
          new String[] {"hl", "true", "hl.fl", "allow_token_document"},
          new String[] {"qf", "allow_token_document", "q", "hr"},
          new String[] {"df", "allow_token_document", "defType", "lucene", "q", "hr"},
          new String[] {"facet", "true", "facet.field", "title", "facet.range", "title"},
          new String[] {"rows", "100000"},
          new String[] {"fq", "{!tag=a cache=false}id:x"},
          new String[] {"facet", "true", "facet.field", "{!terms=secret}id"});

  @Test
  public void everyFamilyIsRefusedForAnonymousAndOtherSolrUsers() throws Exception {
    for (String principal : new String[] {null, "bob"}) {
      for (String[] attack : ATTACKS) {
        List<String> params = new ArrayList<>(List.of("q", "*:*"));
        params.addAll(List.of(attack));
        SolrException refused =
            expectThrows(
                SolrException.class,
                () -> search("/select", principal, params.toArray(new String[0])));
        assertEquals(String.join(" ", attack), 400, refused.code());
        assertTrue(refused.getMessage(), refused.getMessage().startsWith("'"));
      }
    }
  }

  @Test
  public void theServiceAccountIsNotHeldToTheGrammar() throws Exception {
    Map<String, Object> answer =
        search(
            "/select",
            "datafari-rag",
            "q",
            "*:*",
            "fl",
            "id,allow_token_document",
            "AuthenticatedUserName",
            "alice",
            "debugQuery",
            "true",
            "rows",
            "100000");
    assertEquals(4, ids(answer).size());
  }

  @Test
  public void theServiceAccountHandsAUsersParametersToTheSameRules() throws Exception {
    // a user's query and filters, handed over: judged as a direct client's, then run for the user
    assertEquals(
        Set.of("pub", "staff"),
        ids(
            named(
                "bob",
                "client.q",
                "canteen",
                "client.fq",
                "{!tag=l}language:(en OR fr)",
                "fl",
                "id")));
    assertEquals(
        Set.of("pub", "nocontractors"),
        ids(named("bob", "q", "*:*", "client.fq", "language:en", "fl", "id")));
    String nested = "\\u005fquery_:\"{!join from=language to=language}content:" + SECRET + "\"";
    for (String[] handed :
        List.of(
            new String[] {"client.fq", nested},
            new String[] {"client.q", nested, "defType", "lucene"},
            new String[] {"client.facet.query", nested, "facet", "true"},
            new String[] {"client.fq", "${m}", "m", "id:secret", "expandMacros", "false"},
            new String[] {"client.fq", "${m}", "m", "id:secret"},
            new String[] {"client.fq", "allow_token_document:hr"},
            new String[] {"client.sort", "termfreq(content,'" + SECRET + "') desc"},
            new String[] {"client.AuthenticatedUserName", "alice"},
            new String[] {"client.ids", "secret"},
            new String[] {"client.qt", "/internal"})) {
      List<String> params = new ArrayList<>(List.of("q", "*:*"));
      params.addAll(List.of(handed));
      SolrException refused =
          expectThrows(SolrException.class, () -> named("bob", params.toArray(new String[0])));
      assertEquals(String.join(" ", handed), 400, refused.code());
    }
    // the service account's own parameters are its own: a join of its making runs
    assertEquals(
        Set.of("pub"),
        ids(
            named(
                "bob",
                "q",
                "*:*",
                "fq",
                "{!join from=language to=language}id:secret",
                "fl",
                "id",
                "client.fq",
                "id:pub")));
  }

  @Test
  public void aHandedOverFacetCountsOnlyReadableValues() throws Exception {
    String handed =
        Utils.toJSONString(named("bob", "q", "*:*", "facet", "true", "client.facet.field", "id"));
    assertFalse(handed, handed.contains("secret"));
    // the control: the service account's own facet keeps Solr's mincount of 0
    String own = Utils.toJSONString(named("bob", "q", "*:*", "facet", "true", "facet.field", "id"));
    assertTrue(own, own.contains("secret"));
  }

  @Test
  public void theFamiliesLeakWithoutTheGuard() throws Exception {
    // the control of the test above: the filter alone does not hold these
    String subquery =
        Utils.toJSONString(
            search(
                "/unguarded",
                null,
                "q",
                "*:*",
                "fl",
                "id,x:[subquery]",
                "x.q",
                "id:secret",
                "x.fl",
                "content",
                "x.qt",
                "/internal"));
    assertTrue(subquery, subquery.contains(SECRET));
    String terms =
        Utils.toJSONString(
            search(
                "/unguarded",
                null,
                "q",
                "*:*",
                "terms",
                "true",
                "terms.fl",
                "content",
                "terms.prefix",
                "zebra"));
    assertTrue(terms, terms.contains(SECRET));
  }
}
