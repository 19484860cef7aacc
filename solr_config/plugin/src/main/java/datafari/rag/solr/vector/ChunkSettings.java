package datafari.rag.solr.vector;

import java.util.Locale;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.SolrParams;

/**
 * The chunk-and-embed processor's arguments, each required: solrconfig.xml gives every one, most as
 * Datafari's {@code vector.*} user properties with their defaults ({@code
 * ${vector.chunksize:300}}), which the sidecar's configuration holds too ({@code
 * tests/test_solrconfig_defaults.py}). No default is kept here a second time.
 */
record ChunkSettings(
    boolean enabled,
    String collection,
    String textField,
    String modelName,
    String vectorField,
    String splitter,
    int chunkSize,
    int maxOverlap,
    boolean tokens,
    String tokenizer,
    int minLength,
    double minAlnumRatio,
    int batchChunks) {

  /**
   * From the processor's arguments ({@code params.required()}: a missing one fails the core's
   * load).
   */
  static ChunkSettings of(SolrParams required) {
    String unit = required.get("chunksizeUnit").toLowerCase(Locale.ROOT);
    if (!unit.equals("tokens") && !unit.equals("characters")) {
      throw new SolrException(
          ErrorCode.SERVER_ERROR,
          "vector.chunksize.unit must be tokens or characters, not '" + unit + "'");
    }
    ChunkSettings settings =
        new ChunkSettings(
            required.getBool("enabled"),
            required.get("collection"),
            required.get("textField"),
            required.get("model"),
            required.get("vectorField"),
            required.get("splitter"),
            required.getInt("chunksize"),
            required.getInt("maxoverlap"),
            unit.equals("tokens"),
            required.get("tokenizer"),
            required.getInt("minchunklength"),
            required.getDouble("minalphanumratio"),
            required.getInt("batchChunks"));
    try {
      // checked now, so that a bad user property fails the core's (re)load
      new Chunker(
          settings.splitter,
          settings.chunkSize,
          settings.maxOverlap,
          null,
          settings.minLength,
          settings.minAlnumRatio);
    } catch (IllegalArgumentException e) {
      throw new SolrException(ErrorCode.SERVER_ERROR, e.getMessage(), e);
    }
    return settings;
  }
}
