package datafari.rag.solr.textvector;

import dev.langchain4j.model.embedding.EmbeddingModel;
import java.lang.reflect.Method;
import java.time.Duration;
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
 * no builder: they are constructed, with an executor of {@code threads} threads (their only
 * parameter) when given, else langchain4j's own (one thread per core).
 */
final class EmbeddingModelFactory {

  private static final long IDLE_SECONDS = 60;

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

  /** An in-process model: its constructor, with a bounded executor when {@code threads} is set. */
  private static EmbeddingModel construct(Class<?> modelClass, Map<String, Object> params)
      throws ReflectiveOperationException {
    Object threads = null;
    if (params != null) {
      for (Map.Entry<String, Object> param : params.entrySet()) {
        if (!param.getKey().equals("threads")) {
          throw new ModelStoreException(
              "Parameter '" + param.getKey() + "' is not supported by " + modelClass.getName()
                  + " (an in-process model takes only 'threads')",
              null);
        }
        threads = param.getValue();
      }
    }
    if (threads == null) {
      return (EmbeddingModel) modelClass.getConstructor().newInstance();
    }
    int count = ((Number) threads).intValue();
    if (count < 1) {
      throw new ModelStoreException("Parameter 'threads' must be at least 1, not " + count, null);
    }
    // idle threads end after a minute: a model replaced in the store leaves no thread behind
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            count,
            count,
            IDLE_SECONDS,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            new SolrNamedThreadFactory("inProcessEmbedding"));
    executor.allowCoreThreadTimeOut(true);
    return (EmbeddingModel) modelClass.getConstructor(Executor.class).newInstance(executor);
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
