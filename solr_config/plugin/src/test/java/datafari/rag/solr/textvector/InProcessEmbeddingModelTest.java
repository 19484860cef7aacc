package datafari.rag.solr.textvector;

import com.carrotsearch.randomizedtesting.annotations.ThreadLeakScope;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.solr.SolrTestCase;
import org.apache.solr.core.SolrResourceLoader;
import org.junit.Test;

/**
 * The model store builds langchain4j's in-process bge-small-en-v1.5 (no builder: constructed, with
 * a bounded executor) and it embeds inside the JVM: 384 normalised dimensions, a paraphrase nearer
 * than an unrelated sentence; a parameter an in-process model does not take is refused. Built from
 * its files with a session of one thread per text, it gives the same vectors, and so does the
 * session of every thread a text embedded alone runs on.
 */
@ThreadLeakScope(ThreadLeakScope.Scope.NONE) // the model's executor lives as long as the model
public class InProcessEmbeddingModelTest extends SolrTestCase {
  private static final String BGE =
      "dev.langchain4j.model.embedding.onnx.bgesmallenv15.BgeSmallEnV15EmbeddingModel";
  private static final Map<String, Object> FILES =
      Map.of(
          "threads", 2,
          "queryThreads", 2,
          "onnxFile", "bge-small-en-v1.5.onnx",
          "tokenizerFile", "bge-small-en-v1.5-tokenizer.json",
          "pooling", "CLS");

  @Test
  public void testTheInProcessModelEmbedsInsideTheJvm() {
    SolrResourceLoader loader = new SolrResourceLoader(createTempDir());
    EmbeddingModel model = EmbeddingModelFactory.build(loader, BGE, Map.of("threads", 1));
    Embedding pump = model.embed("The pump was checked on site.").content();
    Embedding paraphrase = model.embed("Someone inspected the pump at the site.").content();
    Embedding other = model.embed("Annual leave is 25 days per year.").content();
    assertEquals(384, pump.dimension());
    double norm = 0;
    for (float v : pump.vector()) {
      norm += v * v;
    }
    assertEquals(1.0, norm, 1e-4);
    assertTrue(cosine(pump, paraphrase) > cosine(pump, other) + 0.1);
  }

  @Test
  public void testAParameterOfARemoteModelIsRefused() {
    SolrResourceLoader loader = new SolrResourceLoader(createTempDir());
    ModelStoreException refused =
        expectThrows(
            ModelStoreException.class,
            () -> EmbeddingModelFactory.build(loader, BGE, Map.of("baseUrl", "http://x/v1")));
    String message = refused.getMessage();
    assertTrue(message, message.contains("takes only [threads, queryThreads, onnxFile"));
  }

  @Test
  public void testOneThreadPerTextGivesTheSameVectorsAsTheModelsOwnSession() {
    SolrResourceLoader loader = new SolrResourceLoader(createTempDir());
    EmbeddingModel own = EmbeddingModelFactory.build(loader, BGE, Map.of("threads", 1));
    EmbeddingModel tuned = EmbeddingModelFactory.build(loader, BGE, FILES);
    assertTrue(tuned instanceof OneThreadPerTextModel);
    List<TextSegment> texts =
        List.of(
            TextSegment.from("The pump was checked on site."),
            TextSegment.from("Annual leave is 25 days per year."),
            TextSegment.from("Reset your password from the portal."));
    List<Embedding> expected = own.embedAll(texts).content();
    List<Embedding> got = tuned.embedAll(texts).content();
    for (int i = 0; i < texts.size(); i++) {
      double cosine = cosine(expected.get(i), got.get(i));
      assertTrue(i + ": " + cosine, cosine > 0.9999);
    }
  }

  @Test
  public void testATextEmbeddedAloneOnEveryThreadGetsTheBatchsVector() {
    SolrResourceLoader loader = new SolrResourceLoader(createTempDir());
    EmbeddingModel tuned = EmbeddingModelFactory.build(loader, BGE, FILES);
    assertTrue(((OneThreadPerTextModel) tuned).usesEveryThreadAlone());
    String question = "Does aspirin inhibit the production of PGE2?";
    Embedding alone = tuned.embed(question).content();
    List<TextSegment> batch = List.of(TextSegment.from(question), TextSegment.from("Leave."));
    Embedding inBatch = tuned.embedAll(batch).content().get(0);
    double cosine = cosine(alone, inBatch);
    assertTrue("cosine " + cosine, cosine > 0.9999);
    Map<String, Object> one = new HashMap<>(FILES);
    one.remove("queryThreads");
    EmbeddingModel single = EmbeddingModelFactory.build(loader, BGE, one);
    assertFalse(((OneThreadPerTextModel) single).usesEveryThreadAlone());
    assertTrue(cosine(single.embed(question).content(), alone) > 0.9999);
    Map<String, Object> none = new HashMap<>(FILES);
    none.put("queryThreads", 0);
    ModelStoreException refused =
        expectThrows(
            ModelStoreException.class, () -> EmbeddingModelFactory.build(loader, BGE, none));
    String message = refused.getMessage();
    assertTrue(message, message.contains("'queryThreads' must be at least 1"));
  }

  @Test
  public void testAFileMissingFromTheJarIsNamed() {
    SolrResourceLoader loader = new SolrResourceLoader(createTempDir());
    Map<String, Object> wrong = new HashMap<>(FILES);
    wrong.put("onnxFile", "no-such-model.onnx");
    ModelStoreException refused =
        expectThrows(
            ModelStoreException.class, () -> EmbeddingModelFactory.build(loader, BGE, wrong));
    String message = refused.getMessage();
    assertTrue(message, message.contains("No no-such-model.onnx in the jar"));
  }

  private static double cosine(Embedding a, Embedding b) {
    double dot = 0;
    for (int i = 0; i < a.dimension(); i++) {
      dot += a.vector()[i] * b.vector()[i];
    }
    return dot; // both normalised
  }
}
