package datafari.rag.solr.vector;

import com.carrotsearch.randomizedtesting.annotations.ThreadLeakFilters;
import com.sun.net.httpserver.HttpServer;
import datafari.rag.solr.HttpClientThreads;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.tests.util.QuickPatchThreadsFilter;
import org.apache.solr.SolrIgnoredThreadsFilter;
import org.apache.solr.client.solrj.SolrRequest;
import org.apache.solr.client.solrj.impl.CloudSolrClient;
import org.apache.solr.client.solrj.request.CollectionAdminRequest;
import org.apache.solr.client.solrj.request.GenericSolrRequest;
import org.apache.solr.client.solrj.request.QueryRequest;
import org.apache.solr.client.solrj.request.UpdateRequest;
import org.apache.solr.cloud.SolrCloudTestCase;
import org.apache.solr.common.SolrDocument;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.util.Utils;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * FileShare's chunk-and-embed processor on a real SolrCloud of two nodes, FileShare and VectorMain
 * of two shards each made from the product's configsets, and an OpenAI-compatible embedding service
 * of the test's own (which can be made to fail): every write to FileShare, from any client, is
 * reflected in VectorMain in the same request — chunks for adds, the last version's only for
 * updates, none for deletes — and a failing embedding service fails the request with no chunk of
 * another version left behind.
 */
@ThreadLeakFilters(
    defaultFilters = true,
    filters = {
      SolrIgnoredThreadsFilter.class,
      QuickPatchThreadsFilter.class,
      HttpClientThreads.class
    })
public class VectorUpdateProcessorTest extends SolrCloudTestCase {
  private static final int DIMENSION = 384;
  private static final AtomicBoolean FAILING = new AtomicBoolean();
  private static final AtomicInteger CALLS = new AtomicInteger();
  private static HttpServer embeddings;

  @BeforeClass
  public static void startCluster() throws Exception {
    embeddings = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    embeddings.createContext("/v1/embeddings", VectorUpdateProcessorTest::embed);
    embeddings.start();
    Path configsets = Path.of("..", "configsets").toAbsolutePath().normalize();
    Path fileShare = createTempDir("FileShare").resolve("conf");
    copyTree(configsets.resolve("FileShare").resolve("conf"), fileShare);
    // the embedding model's own tokenizer (langchain4j's packaged bge-small-en-v1.5), counted with
    try (InputStream tokenizer =
        VectorUpdateProcessorTest.class.getResourceAsStream("/bge-small-en-v1.5-tokenizer.json")) {
      Files.copy(tokenizer, fileShare.resolve("tokenizer.json"));
    }
    configureCluster(2)
        .addConfig("FileShare", fileShare)
        .addConfig("VectorMain", configsets.resolve("VectorMain").resolve("conf"))
        .configure();
    CloudSolrClient client = cluster.getSolrClient();
    CollectionAdminRequest.createCollection("VectorMain", "VectorMain", 2, 1)
        .setRouterField("parent_doc")
        .process(client);
    CollectionAdminRequest.createCollection("FileShare", "FileShare", 2, 1).process(client);
    cluster.waitForActiveCollection("VectorMain", 2, 2);
    cluster.waitForActiveCollection("FileShare", 2, 2);
    String model =
        "{\"class\": \"dev.langchain4j.model.openai.OpenAiEmbeddingModel\", \"name\": \"default_model\","
            + " \"params\": {\"baseUrl\": \"http://127.0.0.1:"
            + embeddings.getAddress().getPort()
            + "/v1\", \"apiKey\": \"test\", \"modelName\": \"test-model\", \"timeout\": 10,"
            + " \"maxRetries\": 0}}";
    for (String collection : List.of("VectorMain", "FileShare")) {
      send(collection, SolrRequest.METHOD.PUT, "/schema/text-to-vector-model-store", model);
      CollectionAdminRequest.reloadCollection(collection).process(client);
    }
    send(
        "FileShare",
        SolrRequest.METHOD.POST,
        "/config",
        "{\"set-user-property\": {\"vector.enabled\": \"true\", \"vector.chunksize\": \"40\"}}");
  }

  @AfterClass
  public static void stopEmbeddings() {
    if (embeddings != null) {
      embeddings.stop(0);
      embeddings = null;
    }
  }

  @Before
  public void embeddingServiceWorks() {
    FAILING.set(false);
  }

  private static void send(String collection, SolrRequest.METHOD method, String path, String json)
      throws Exception {
    GenericSolrRequest request = new GenericSolrRequest(method, path);
    request.withContent(json.getBytes(StandardCharsets.UTF_8), "application/json");
    request.setRequiresCollection(true);
    cluster.getSolrClient().request(request, collection);
  }

  private static void copyTree(Path from, Path to) throws Exception {
    try (var files = Files.walk(from)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(file).toString());
        if (Files.isDirectory(file)) {
          Files.createDirectories(target);
        } else {
          Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  /** An OpenAI-compatible /v1/embeddings: one deterministic unit vector per input text. */
  @SuppressWarnings("unchecked")
  private static void embed(com.sun.net.httpserver.HttpExchange exchange)
      throws java.io.IOException {
    try (exchange) {
      CALLS.incrementAndGet();
      Map<String, Object> body = (Map<String, Object>) Utils.fromJSON(exchange.getRequestBody());
      if (FAILING.get()) {
        exchange.sendResponseHeaders(500, -1);
        return;
      }
      Object input = body.get("input");
      List<String> texts = input instanceof List ? (List<String>) input : List.of((String) input);
      List<Object> data = new ArrayList<>();
      for (int i = 0; i < texts.size(); i++) {
        float[] vector = new float[DIMENSION];
        vector[Math.floorMod(texts.get(i).hashCode(), DIMENSION)] = 1f;
        List<Float> values = new ArrayList<>();
        for (float v : vector) {
          values.add(v);
        }
        data.add(Map.of("object", "embedding", "index", i, "embedding", values));
      }
      Map<String, Object> answer = new HashMap<>();
      answer.put("object", "list");
      answer.put("data", data);
      answer.put("model", "test-model");
      answer.put("usage", Map.of("prompt_tokens", 1, "total_tokens", 1));
      byte[] bytes = Utils.toJSONString(answer).getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, bytes.length);
      exchange.getResponseBody().write(bytes);
    }
  }

  private static String text(String word, int sentences) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < sentences; i++) {
      text.append("The ")
          .append(word)
          .append(" pump number ")
          .append(i)
          .append(" is inspected every spring by the maintenance team. ");
    }
    return text.toString();
  }

  private static SolrInputDocument parent(String id, String content) {
    SolrInputDocument doc = new SolrInputDocument();
    doc.addField("id", id);
    doc.addField("title", "Title of " + id);
    doc.addField("exactContent", content);
    doc.addField("language", "en");
    return doc;
  }

  private static void write(List<SolrInputDocument> docs) throws Exception {
    UpdateRequest update = new UpdateRequest();
    update.add(docs);
    update.setParam("commit", "true");
    update.process(cluster.getSolrClient(), "FileShare");
    cluster.getSolrClient().commit("VectorMain");
  }

  /** parent id -> its chunks (id, text), straight from VectorMain's unfiltered handler. */
  private static Map<String, List<SolrDocument>> chunks() throws Exception {
    ModifiableSolrParams params = new ModifiableSolrParams();
    params.set("q", "*:*");
    params.set("rows", 10000);
    params.set("fl", "id,parent_doc,embedded_content,chunk_count,vector_384");
    QueryRequest query = new QueryRequest(params);
    query.setPath("/internal");
    Map<String, List<SolrDocument>> byParent = new HashMap<>();
    for (SolrDocument chunk : query.process(cluster.getSolrClient(), "VectorMain").getResults()) {
      byParent
          .computeIfAbsent((String) chunk.getFirstValue("parent_doc"), k -> new ArrayList<>())
          .add(chunk);
    }
    return byParent;
  }

  @Test
  public void everyParentGetsItsChunksOnEveryShardWithVectors() throws Exception {
    List<SolrInputDocument> docs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      docs.add(parent("add-" + i, text("valve" + i, 3 + i)));
    }
    int before = CALLS.get();
    write(docs);
    Map<String, List<SolrDocument>> chunks = chunks();
    for (int i = 0; i < 8; i++) {
      List<SolrDocument> mine = chunks.get("add-" + i);
      assertNotNull("no chunks for add-" + i, mine);
      assertTrue("a long text is cut into several chunks", mine.size() > 1 || i == 0);
      for (SolrDocument chunk : mine) {
        assertEquals(mine.size(), ((Number) chunk.getFirstValue("chunk_count")).intValue());
        assertTrue(((String) chunk.getFirstValue("embedded_content")).contains("valve" + i));
        assertEquals(DIMENSION, ((List<?>) chunk.getFieldValue("vector_384")).size());
      }
    }
    // the chunks of a request's documents are embedded together, not one call per document
    assertTrue("embedding calls: " + (CALLS.get() - before), CALLS.get() - before < 8);
  }

  @Test
  public void anUpdateKeepsOnlyTheLastVersionsChunksAndADeleteRemovesThem() throws Exception {
    write(List.of(parent("upd", text("boiler", 12))));
    Set<String> first = ids(chunks().get("upd"));
    assertTrue(first.size() > 2);
    write(List.of(parent("upd", text("furnace", 2))));
    List<SolrDocument> second = chunks().get("upd");
    assertTrue(second.size() < first.size());
    for (SolrDocument chunk : second) {
      assertTrue(
          (String) chunk.getFirstValue("embedded_content"),
          ((String) chunk.getFirstValue("embedded_content")).contains("furnace"));
    }
    UpdateRequest delete = new UpdateRequest();
    delete.deleteById("upd");
    delete.setParam("commit", "true");
    delete.process(cluster.getSolrClient(), "FileShare");
    cluster.getSolrClient().commit("VectorMain");
    assertNull(chunks().get("upd"));
  }

  @Test
  public void aFailingEmbeddingServiceFailsTheWriteAndLeavesNoOtherVersionsChunks()
      throws Exception {
    write(List.of(parent("fail-old", text("gasket", 6))));
    assertNotNull(chunks().get("fail-old"));
    FAILING.set(true);
    Exception refused =
        expectThrows(
            Exception.class,
            () ->
                write(
                    List.of(
                        parent("fail-new", text("hose", 4)), parent("fail-old", text("seal", 4)))));
    assertTrue(refused.getMessage(), refused.getMessage().contains("fail-"));
    FAILING.set(false);
    cluster.getSolrClient().commit("VectorMain");
    Map<String, List<SolrDocument>> after = chunks();
    assertNull("a new parent without its chunks has none", after.get("fail-new"));
    // the old version's chunks must not stand for the new text: deleted, for reconcile or a retry
    assertNull("the previous version's chunks were left", after.get("fail-old"));
    write(List.of(parent("fail-new", text("hose", 4)), parent("fail-old", text("seal", 4))));
    assertNotNull(chunks().get("fail-new"));
    assertNotNull(chunks().get("fail-old"));
  }

  @Test
  public void aDocumentSentWithoutLanguageIsDetectedAndAFrenchOneIsSearchedInFrench()
      throws Exception {
    SolrInputDocument french = new SolrInputDocument();
    french.addField("id", "lang-fr");
    french.addField("title", "Les chevaux de la vallée");
    french.addField(
        "exactContent",
        "Les chevaux de la vallée sont nourris chaque matin par les éleveurs du village. "
            + "Ils passent l'hiver dans les écuries et retournent aux pâturages au printemps.");
    SolrInputDocument unsure = new SolrInputDocument();
    unsure.addField("id", "lang-none");
    unsure.addField("exactContent", "Pump 12: 3.5 bar, 40 °C.");
    write(List.of(french, unsure));
    ModifiableSolrParams params = new ModifiableSolrParams();
    // "cheval" matches "chevaux" only through the French chain (content_fr), in both collections
    params.set("q", "content_fr:cheval");
    params.set("fl", "id,language");
    for (String collection : List.of("FileShare", "VectorMain")) {
      QueryRequest query = new QueryRequest(params);
      query.setPath("/internal");
      List<SolrDocument> found =
          new ArrayList<>(query.process(cluster.getSolrClient(), collection).getResults());
      assertFalse("no French match in " + collection, found.isEmpty());
      for (SolrDocument doc : found) {
        assertEquals(collection, "fr", doc.getFirstValue("language"));
      }
    }
    ModifiableSolrParams byId = new ModifiableSolrParams();
    byId.set("q", "id:lang-none");
    byId.set("fl", "id,language");
    QueryRequest query = new QueryRequest(byId);
    query.setPath("/internal");
    SolrDocument plain = query.process(cluster.getSolrClient(), "FileShare").getResults().get(0);
    assertNull(
        "too few letters to tell: no language rather than a wrong one",
        plain.getFirstValue("language"));
  }

  private static Set<String> ids(List<SolrDocument> docs) {
    Set<String> ids = new TreeSet<>();
    for (SolrDocument doc : docs) {
      ids.add((String) doc.getFirstValue("id"));
    }
    return ids;
  }
}
