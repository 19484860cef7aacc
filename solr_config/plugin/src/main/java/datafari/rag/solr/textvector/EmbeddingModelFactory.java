package datafari.rag.solr.textvector;

import dev.langchain4j.model.embedding.EmbeddingModel;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import org.apache.solr.core.SolrResourceLoader;

/**
 * Builds a langchain4j {@link EmbeddingModel} from a model-store entry. Every langchain4j model
 * has a builder whose setters are named after its parameters, so one reflective loop serves all
 * providers; only parameters that are not plain values (durations, boxed integers) need a rule.
 */
final class EmbeddingModelFactory {

  private EmbeddingModelFactory() {}

  static EmbeddingModel build(
      SolrResourceLoader loader, String className, Map<String, Object> params) {
    try {
      Class<?> modelClass = loader.findClass(className, EmbeddingModel.class);
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
