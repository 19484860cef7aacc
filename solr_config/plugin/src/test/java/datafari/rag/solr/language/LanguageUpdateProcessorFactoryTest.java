package datafari.rag.solr.language;

import java.util.Map;
import org.apache.solr.SolrTestCase;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.util.NamedList;
import org.junit.Test;

/** The language step on documents as writers send them: detected, declared, unsure, atomic. */
public class LanguageUpdateProcessorFactoryTest extends SolrTestCase {
  private static final String FRENCH =
      "Le conseil d'administration a approuvé le budget de l'année prochaine après une longue"
          + " discussion sur les investissements et les recrutements.";
  private static final String ENGLISH =
      "The board approved next year's budget after a long discussion about investments and"
          + " hiring plans for the engineering teams.";

  private static LanguageUpdateProcessorFactory factory() {
    LanguageUpdateProcessorFactory factory = new LanguageUpdateProcessorFactory();
    factory.init(new NamedList<>());
    return factory;
  }

  private static SolrInputDocument doc(String text, String language) {
    SolrInputDocument doc = new SolrInputDocument();
    doc.setField("id", "d");
    doc.setField("title", "Budget");
    doc.setField("exactContent", text);
    if (language != null) {
      doc.setField("language", language);
    }
    return doc;
  }

  @Test
  public void aFrenchTextGetsFrAndItsFrenchCopies() {
    SolrInputDocument doc = doc(FRENCH, null);
    factory().label(doc);
    assertEquals("fr", doc.getFieldValue("language"));
    assertEquals(FRENCH, doc.getFieldValue("content_fr"));
    assertEquals("Budget", doc.getFieldValue("title_fr"));
  }

  @Test
  public void anEnglishTextGetsEnAndNoFrenchCopy() {
    SolrInputDocument doc = doc(ENGLISH, null);
    factory().label(doc);
    assertEquals("en", doc.getFieldValue("language"));
    assertNull(doc.getField("content_fr"));
  }

  @Test
  public void aDeclaredLanguageIsKeptAndADeclaredFrenchOneGetsItsCopies() {
    SolrInputDocument english = doc(FRENCH, "en");
    factory().label(english);
    assertEquals("en", english.getFieldValue("language"));
    assertNull(english.getField("content_fr"));
    SolrInputDocument french = doc(ENGLISH, "fr");
    factory().label(french);
    assertEquals(ENGLISH, french.getFieldValue("content_fr"));
  }

  @Test
  public void tooFewLettersGiveNoLanguage() {
    SolrInputDocument doc = doc("Pump 12: 3.5 bar, 40 °C.", null);
    factory().label(doc);
    assertNull(doc.getField("language"));
  }

  @Test
  public void anAtomicUpdateOfTheTextIsLeftAsItIs() {
    SolrInputDocument doc = new SolrInputDocument();
    doc.setField("id", "d");
    doc.setField("exactContent", Map.of("set", FRENCH));
    factory().label(doc);
    assertNull(doc.getField("language"));
    assertNull(doc.getField("content_fr"));
  }

  @Test
  public void onlyTheFirstCharactersAreRead() {
    NamedList<Object> args = new NamedList<>();
    args.add("sampleChars", 300);
    LanguageUpdateProcessorFactory factory = new LanguageUpdateProcessorFactory();
    factory.init(args);
    SolrInputDocument doc = doc(ENGLISH + " " + ENGLISH + " " + FRENCH.repeat(20), null);
    factory.label(doc);
    assertEquals("en", doc.getFieldValue("language"));
  }
}
