package datafari.rag.solr.textvector;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * An in-process ONNX embedding model whose session computes each text on one thread, the
 * executor carrying the parallelism (one text per thread). langchain4j's packaged models build
 * their session with onnxruntime's defaults (one intra-op thread per core), so an executor of
 * {@code threads} threads runs {@code threads} times as many compute threads as there are cores,
 * and indexing slowed to 0.61 of the same model in Python. The ONNX file and the tokenizer are
 * read from the packaged model's own jar: the same weights, the same vectors.
 */
final class OneThreadPerTextModel extends AbstractInProcessEmbeddingModel {

  private static final Map<String, OnnxBertBiEncoder> ENCODERS = new ConcurrentHashMap<>();

  private final OnnxBertBiEncoder encoder;

  private OneThreadPerTextModel(Executor executor, OnnxBertBiEncoder encoder) {
    super(executor);
    this.encoder = encoder;
  }

  @Override
  protected OnnxBertBiEncoder model() {
    return encoder;
  }

  /**
   * The model of {@code onnxFile} and {@code tokenizerFile}, resources beside {@code jarClass}.
   * Its session is made once per JVM and shared, as langchain4j shares its own: the store builds
   * a model each time an entry is read or a core loads, and each session holds the weights.
   */
  static OneThreadPerTextModel load(
      Class<?> jarClass, String onnxFile, String tokenizerFile, String pooling, Executor executor) {
    String key = jarClass.getName() + "|" + onnxFile + "|" + tokenizerFile + "|" + pooling;
    OnnxBertBiEncoder encoder =
        ENCODERS.computeIfAbsent(key, k -> encoder(jarClass, onnxFile, tokenizerFile, pooling));
    return new OneThreadPerTextModel(executor, encoder);
  }

  private static OnnxBertBiEncoder encoder(
      Class<?> jarClass, String onnxFile, String tokenizerFile, String pooling) {
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
        options.setIntraOpNumThreads(1);
        options.setInterOpNumThreads(1);
        session = environment.createSession(onnx.readAllBytes(), options);
      }
      return new OnnxBertBiEncoder(environment, session, tokenizer, mode);
    } catch (IOException | OrtException e) {
      throw new ModelStoreException("Could not load " + onnxFile + ": " + e.getMessage(), e);
    }
  }
}
