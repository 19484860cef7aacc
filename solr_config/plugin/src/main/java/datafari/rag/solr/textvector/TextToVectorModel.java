package datafari.rag.solr.textvector;

import dev.langchain4j.model.embedding.EmbeddingModel;
import java.util.LinkedHashMap;
import java.util.Map;

/** A named embedding model of the store, with the JSON it was declared with. */
public final class TextToVectorModel {
  private final String name;
  private final String className;
  private final Map<String, Object> params;
  private final EmbeddingModel model;

  TextToVectorModel(String name, String className, Map<String, Object> params, EmbeddingModel model) {
    this.name = name;
    this.className = className;
    this.params = params;
    this.model = model;
  }

  public String getName() {
    return name;
  }

  /** Embeds one text; one HTTP call to the embedding service, as Solr's module does. */
  public float[] vectorise(String text) {
    return model.embed(text).content().vector();
  }

  Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("name", name);
    map.put("class", className);
    map.put("params", params);
    return map;
  }
}
