package datafari.rag.solr.textvector;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import dev.langchain4j.model.output.Response;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process ONNX embedding model whose session computes each text on one thread, the executor
 * carrying the parallelism (one text per thread). langchain4j's packaged models build their session
 * with onnxruntime's defaults (one intra-op thread per core), so an executor of {@code threads}
 * threads runs {@code threads} times as many compute threads as there are cores, and indexing
 * slowed to 0.61 of the same model in Python. The ONNX file and the tokenizer are read from the
 * packaged model's own jar: the same weights, the same vectors.
 *
 * <p>A text embedded while nothing else is (a search's query, most of the time) runs instead on a
 * second session of {@code queryThreads} compute threads: one question on one core took 8.6 ms, on
 * two 4.7 ms, and that time is what a kNN search pays over BM25. Under load every text goes back to
 * one thread, so the cores are never asked for more threads than they have.
 */
final class OneThreadPerTextModel extends AbstractInProcessEmbeddingModel {

  /** Sessions by file and thread count, made once per JVM and shared by every model built. */
  private static final Map<String, OnnxBertBiEncoder> ENCODERS = new ConcurrentHashMap<>();

  /** Texts this class embeds in the JVM now, whatever the model: they share the same cores. */
  private static final AtomicInteger RUNNING = new AtomicInteger();

  private final OnnxBertBiEncoder perText;
  private final Alone alone; // null: one thread for a text alone too

  private OneThreadPerTextModel(Executor executor, OnnxBertBiEncoder perText, Alone alone) {
    super(executor);
    this.perText = perText;
    this.alone = alone;
  }

  @Override
  protected OnnxBertBiEncoder model() {
    return perText;
  }

  /** The texts' vectors; a lone text takes every thread when no other text is being embedded. */
  @Override
  public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
    boolean lone = alone != null && segments.size() == 1 && RUNNING.compareAndSet(0, 1);
    if (!lone) {
      RUNNING.incrementAndGet();
    }
    try {
      return lone ? alone.embedAll(segments) : super.embedAll(segments);
    } finally {
      RUNNING.decrementAndGet();
    }
  }

  /** Whether a text embedded alone runs on more than one thread (tests). */
  boolean usesEveryThreadAlone() {
    return alone != null;
  }

  /**
   * The model of {@code onnxFile} and {@code tokenizerFile}, resources beside {@code jarClass}, a
   * text embedded alone on {@code queryThreads} threads (1: no second session). Its sessions are
   * made once per JVM and shared, as langchain4j shares its own: the store builds a model each time
   * an entry is read or a core loads, and each session holds the weights.
   */
  static OneThreadPerTextModel load(
      Class<?> jarClass,
      String onnxFile,
      String tokenizerFile,
      String pooling,
      int queryThreads,
      Executor executor) {
    OnnxBertBiEncoder perText = shared(jarClass, onnxFile, tokenizerFile, pooling, 1);
    Alone alone =
        queryThreads > 1
            ? new Alone(shared(jarClass, onnxFile, tokenizerFile, pooling, queryThreads))
            : null;
    return new OneThreadPerTextModel(executor, perText, alone);
  }

  private static OnnxBertBiEncoder shared(
      Class<?> jarClass, String onnxFile, String tokenizerFile, String pooling, int threads) {
    String key =
        jarClass.getName() + "|" + onnxFile + "|" + tokenizerFile + "|" + pooling + "|" + threads;
    return ENCODERS.computeIfAbsent(
        key, k -> encoder(jarClass, onnxFile, tokenizerFile, pooling, threads));
  }

  private static OnnxBertBiEncoder encoder(
      Class<?> jarClass, String onnxFile, String tokenizerFile, String pooling, int threads) {
    PoolingMode mode;
    try {
      mode = PoolingMode.valueOf(pooling);
    } catch (IllegalArgumentException e) {
      throw new ModelStoreException("Parameter 'pooling' must be CLS or MEAN, not " + pooling, e);
    }
    ClassLoader jar = jarClass.getClassLoader();
    try (InputStream onnx = jar.getResourceAsStream(onnxFile);
        InputStream tokenizer = jar.getResourceAsStream(tokenizerFile)) {
      if (onnx == null || tokenizer == null) {
        String missing = onnx == null ? onnxFile : tokenizerFile;
        throw new ModelStoreException(
            "No " + missing + " in the jar of " + jarClass.getName(), null);
      }
      OrtEnvironment environment = OrtEnvironment.getEnvironment();
      OrtSession session;
      try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
        options.setIntraOpNumThreads(threads);
        options.setInterOpNumThreads(1);
        session = environment.createSession(onnx.readAllBytes(), options);
      }
      return new OnnxBertBiEncoder(environment, session, tokenizer, mode);
    } catch (IOException | OrtException e) {
      throw new ModelStoreException("Could not load " + onnxFile + ": " + e.getMessage(), e);
    }
  }

  /** The session of every thread, for a text embedded alone on the caller's thread. */
  private static final class Alone extends AbstractInProcessEmbeddingModel {
    private final OnnxBertBiEncoder encoder;

    Alone(OnnxBertBiEncoder encoder) {
      super(Runnable::run);
      this.encoder = encoder;
    }

    @Override
    protected OnnxBertBiEncoder model() {
      return encoder;
    }
  }
}
