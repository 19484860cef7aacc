package datafari.rag.solr.textvector;

import dev.langchain4j.model.embedding.EmbeddingModel;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.solr.common.util.SolrNamedThreadFactory;
import org.apache.solr.core.SolrResourceLoader;

/**
 * Builds a langchain4j {@link EmbeddingModel} from a model-store entry. Every remote langchain4j
 * model has a builder whose setters are named after its parameters, so one reflective loop serves
 * all providers; only parameters that are not plain values (durations, boxed integers) need a rule.
 * In-process models (an ONNX model inside its jar, e.g. {@code BgeSmallEnV15EmbeddingModel}) have
 * no builder: they are constructed, with an executor of {@code threads} threads when given, else
 * langchain4j's own (one thread per core); with the names of their files in the jar ({@code
 * onnxFile}, {@code tokenizerFile}, {@code pooling}), their session runs one thread per text.
 */
final class EmbeddingModelFactory {

  private static final long IDLE_SECONDS = 60;
  private static final List<String> IN_PROCESS_PARAMS =
      List.of("threads", "queryThreads", "onnxFile", "tokenizerFile", "pooling");

  private EmbeddingModelFactory() {}

  static EmbeddingModel build(
      SolrResourceLoader loader, String className, Map<String, Object> params) {
    try {
      Class<?> modelClass = loader.findClass(className, EmbeddingModel.class);
      if (!hasBuilder(modelClass)) {
        return construct(modelClass, params);
      }
      Object builder = modelClass.getMethod("builder").invoke(null);
      if (params != null) {
        for (Map.Entry<String, Object> param : params.entrySet()) {
          applyParam(builder, param.getKey(), param.getValue());
        }
      }
      return (EmbeddingModel) builder.getClass().getMethod("build").invoke(builder);
    } catch (ModelStoreException e) {
      throw e;
    } catch (ReflectiveOperationException | RuntimeException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new ModelStoreException(
          "Model loading failed for " + className + ": " + cause.getMessage(), cause);
    }
  }

  private static boolean hasBuilder(Class<?> modelClass) {
    try {
      modelClass.getMethod("builder");
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /**
   * An in-process model: with {@code onnxFile}, {@code tokenizerFile} and {@code pooling} (files of
   * the model class's jar), a session of one thread per text on an executor of {@code threads}
   * threads, and one of {@code queryThreads} threads for a text embedded alone when above 1 ({@link
   * OneThreadPerTextModel}); else the class's constructor, with a bounded executor when {@code
   * threads} is set.
   */
  private static EmbeddingModel construct(Class<?> modelClass, Map<String, Object> params)
      throws ReflectiveOperationException {
    Map<String, Object> given = params == null ? Map.of() : params;
    for (String name : given.keySet()) {
      if (!IN_PROCESS_PARAMS.contains(name)) {
        throw new ModelStoreException(
            "Parameter '"
                + name
                + "' is not supported by "
                + modelClass.getName()
                + " (an in-process model takes only "
                + IN_PROCESS_PARAMS
                + ")",
            null);
      }
    }
    Object threads = given.get("threads");
    Object queryThreads = given.get("queryThreads");
    Object onnxFile = given.get("onnxFile");
    if (onnxFile != null) {
      int count =
          threads == null
              ? Runtime.getRuntime().availableProcessors()
              : threadCount("threads", threads);
      return OneThreadPerTextModel.load(
          modelClass,
          String.valueOf(onnxFile),
          String.valueOf(required(given, "tokenizerFile")),
          String.valueOf(required(given, "pooling")),
          queryThreads == null ? 1 : threadCount("queryThreads", queryThreads),
          executor(count));
    }
    if (threads == null) {
      return (EmbeddingModel) modelClass.getConstructor().newInstance();
    }
    Executor executor = executor(threadCount("threads", threads));
    return (EmbeddingModel) modelClass.getConstructor(Executor.class).newInstance(executor);
  }

  private static Object required(Map<String, Object> params, String name) {
    Object value = params.get(name);
    if (value == null) {
      throw new ModelStoreException("Parameter '" + name + "' is required with 'onnxFile'", null);
    }
    return value;
  }

  private static int threadCount(String name, Object threads) {
    if (!(threads instanceof Number)) {
      throw new ModelStoreException(
          "Parameter '" + name + "' must be a number, not " + threads, null);
    }
    int count = ((Number) threads).intValue();
    if (count < 1) {
      throw new ModelStoreException(
          "Parameter '" + name + "' must be at least 1, not " + count, null);
    }
    return count;
  }

  /** Idle threads end after a minute: a model replaced in the store leaves no thread behind. */
  private static ThreadPoolExecutor executor(int count) {
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            count,
            count,
            IDLE_SECONDS,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            new SolrNamedThreadFactory("inProcessEmbedding"));
    executor.allowCoreThreadTimeOut(true);
    return executor;
  }

  private static void applyParam(Object builder, String name, Object value)
      throws ReflectiveOperationException {
    Class<?> type = builder.getClass();
    switch (name) {
      case "timeout":
        type.getMethod(name, Duration.class)
            .invoke(builder, Duration.ofSeconds(((Number) value).longValue()));
        return;
      case "maxRetries":
      case "maxSegmentsPerBatch":
      case "dimensions":
      case "outputDimensionality":
        type.getMethod(name, Integer.class).invoke(builder, ((Number) value).intValue());
        return;
      default:
        Method single = null;
        int candidates = 0;
        for (Method m : type.getMethods()) {
          if (m.getName().equals(name) && m.getParameterCount() == 1) {
            single = m;
            candidates++;
          }
        }
        if (candidates == 1) {
          single.invoke(builder, value);
          return;
        }
        try {
          type.getMethod(name, String.class).invoke(builder, String.valueOf(value));
        } catch (NoSuchMethodException e) {
          throw new ModelStoreException("Parameter '" + name + "' is not supported", e);
        }
    }
  }
}
