package datafari.rag.solr.textvector;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A named embedding model of the store, with the JSON it was declared with. */
public final class TextToVectorModel {
  /** Query texts whose vectors are kept: a few MB at 384 dimensions. */
  static final int QUERY_VECTORS_KEPT = 2048;

  private final String name;
  private final String className;
  private final Map<String, Object> params;
  private final EmbeddingModel model;
  // A query on several shards is parsed by the node that receives it and again by each shard it
  // holds: the same text, embedded once per node instead of once per parse.
  private final Cache<String, float[]> queryVectors =
      Caffeine.newBuilder().maximumSize(QUERY_VECTORS_KEPT).build();

  TextToVectorModel(
      String name, String className, Map<String, Object> params, EmbeddingModel model) {
    this.name = name;
    this.className = className;
    this.params = params;
    this.model = model;
  }

  public String getName() {
    return name;
  }

  /** Embeds one text; one call to the model, as Solr's module does. */
  public float[] vectorise(String text) {
    return model.embed(text).content().vector();
  }

  /**
   * A query text's vector: embedded as {@link #vectorise}, or the one made for the same text lately
   * (documents' texts are not kept: they are embedded once). Callers must not change it.
   */
  public float[] vectoriseQuery(String text) {
    return queryVectors.get(text, this::vectorise);
  }

  /**
   * Embeds texts in one batch (one HTTP call for up to the model's batch size), in order. A
   * response that does not hold one vector per text is an error, never a shifted vector.
   */
  public List<float[]> vectoriseAll(List<String> texts) {
    List<TextSegment> segments = new ArrayList<>(texts.size());
    for (String text : texts) {
      segments.add(TextSegment.from(text));
    }
    List<Embedding> embeddings = model.embedAll(segments).content();
    if (embeddings.size() != texts.size()) {
      throw new IllegalStateException(
          "The embedding service returned "
              + embeddings.size()
              + " vectors for "
              + texts.size()
              + " texts");
    }
    List<float[]> vectors = new ArrayList<>(embeddings.size());
    for (Embedding embedding : embeddings) {
      vectors.add(embedding.vector());
    }
    return vectors;
  }

  Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("name", name);
    map.put("class", className);
    map.put("params", params);
    return map;
  }
}
