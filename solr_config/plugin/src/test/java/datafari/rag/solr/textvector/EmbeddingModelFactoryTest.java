package datafari.rag.solr.textvector;

import com.carrotsearch.randomizedtesting.annotations.ThreadLeakFilters;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import datafari.rag.solr.HttpClientThreads;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.model.embedding.EmbeddingModel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.lucene.tests.util.QuickPatchThreadsFilter;
import org.apache.solr.SolrIgnoredThreadsFilter;
import org.apache.solr.SolrTestCase;
import org.apache.solr.common.util.Utils;
import org.apache.solr.core.SolrResourceLoader;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The model store builds Google Gemini's embedding model (solr.embeddings.service=gemini) from its
 * entry's parameters, the shortened output size among them, and the model calls the Gemini API with
 * them.
 */
@ThreadLeakFilters(
    defaultFilters = true,
    filters = {
      SolrIgnoredThreadsFilter.class,
      QuickPatchThreadsFilter.class,
      HttpClientThreads.class
    })
public class EmbeddingModelFactoryTest extends SolrTestCase {
  private static final List<Map<String, Object>> BODIES = new CopyOnWriteArrayList<>();
  private static final List<String> KEYS = new CopyOnWriteArrayList<>();
  private static HttpServer gemini;

  @BeforeClass
  public static void startGemini() throws IOException {
    gemini = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    gemini.createContext("/v1beta/models/", EmbeddingModelFactoryTest::embed);
    gemini.start();
  }

  @AfterClass
  public static void stopGemini() {
    if (gemini != null) {
      gemini.stop(0);
      gemini = null;
    }
  }

  /** Gemini's batchEmbedContents: one vector per request, as long as it asks. */
  @SuppressWarnings("unchecked")
  private static void embed(HttpExchange exchange) throws IOException {
    try (exchange) {
      Map<String, Object> body = (Map<String, Object>) Utils.fromJSON(exchange.getRequestBody());
      BODIES.add(body);
      KEYS.add(exchange.getRequestHeaders().getFirst("x-goog-api-key"));
      List<Object> embeddings = new ArrayList<>();
      for (Object request : (List<Object>) body.get("requests")) {
        int size =
            ((Number) ((Map<String, Object>) request).get("outputDimensionality")).intValue();
        List<Float> values = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          values.add(i == 0 ? 1f : 0f);
        }
        embeddings.add(Map.of("values", values));
      }
      byte[] bytes =
          Utils.toJSONString(Map.of("embeddings", embeddings)).getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }

  @Test
  public void testGeminiModelIsBuiltFromItsEntryAndCallsTheApi() throws Exception {
    Map<String, Object> params =
        Map.of(
            "baseUrl",
            "http://127.0.0.1:" + gemini.getAddress().getPort() + "/v1beta",
            "apiKey",
            "gemini-key",
            "modelName",
            "gemini-embedding-001",
            "timeout",
            10L,
            "maxRetries",
            0L,
            "outputDimensionality",
            384L);
    try (SolrResourceLoader loader = new SolrResourceLoader(createTempDir())) {
      EmbeddingModel model =
          EmbeddingModelFactory.build(
              loader, "dev.langchain4j.model.googleai.GoogleAiEmbeddingModel", params);
      List<Embedding> vectors =
          model
              .embedAll(
                  List.of(
                      dev.langchain4j.data.segment.TextSegment.from("a pump"),
                      dev.langchain4j.data.segment.TextSegment.from("a valve")))
              .content();
      assertEquals(2, vectors.size());
      assertEquals(384, vectors.get(0).dimension());
    }
    assertEquals(List.of("gemini-key"), KEYS);
    @SuppressWarnings("unchecked")
    Map<String, Object> first =
        (Map<String, Object>) ((List<Object>) BODIES.get(0).get("requests")).get(0);
    assertEquals("models/gemini-embedding-001", first.get("model"));
    assertEquals(384L, ((Number) first.get("outputDimensionality")).longValue());
  }

  @Test
  public void testAnUnknownParameterIsRefusedWithItsName() throws Exception {
    try (SolrResourceLoader loader = new SolrResourceLoader(createTempDir())) {
      ModelStoreException refused =
          expectThrows(
              ModelStoreException.class,
              () ->
                  EmbeddingModelFactory.build(
                      loader,
                      "dev.langchain4j.model.googleai.GoogleAiEmbeddingModel",
                      Map.of("modelName", "m", "apiKey", "k", "noSuchParam", "x")));
      assertTrue(refused.getMessage(), refused.getMessage().contains("noSuchParam"));
    }
  }
}
