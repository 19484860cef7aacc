package datafari.rag.solr.textvector;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;

/**
 * A query's vector as the node that received the request sends it to each shard, so that a query on
 * a collection of many shards is embedded once, not once per node: {@code KEY:v1,v2,…}, KEY naming
 * the query text (the first 16 hex digits of its SHA-256), so that a shard only ever takes the
 * vector of the very text it parses. Floats are written as {@link Float#toString} writes them,
 * which reads back to the same float.
 */
final class ShippedVectors {
  /** The shard request parameter holding them, one value per query text of the request. */
  static final String PARAM = "queryVector";

  static final int MAX_CHARS = 64 * 1024; // 4,096 dimensions of "-0.012345678,"

  private ShippedVectors() {}

  static String key(String text) {
    try {
      byte[] hash =
          MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(hash, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e); // every JVM has SHA-256
    }
  }

  static String encode(String text, float[] vector) {
    StringBuilder out = new StringBuilder(key(text)).append(':');
    for (int i = 0; i < vector.length; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(vector[i]);
    }
    return out.toString();
  }

  /**
   * The vector shipped for {@code text} among {@code values}, or null when none was; one of the
   * wrong dimension, or not a list of numbers, is refused (400).
   */
  static float[] find(String[] values, String text, int dimension) {
    if (values == null) {
      return null;
    }
    String prefix = key(text) + ":";
    for (String value : values) {
      if (value == null || !value.startsWith(prefix)) {
        continue;
      }
      if (value.length() > MAX_CHARS) {
        throw refused("is longer than " + MAX_CHARS + " characters");
      }
      String[] parts = value.substring(prefix.length()).split(",");
      if (parts.length != dimension) {
        throw refused(
            "holds " + parts.length + " numbers, the field has " + dimension + " dimensions");
      }
      float[] vector = new float[dimension];
      try {
        for (int i = 0; i < dimension; i++) {
          vector[i] = Float.parseFloat(parts[i]);
          if (!Float.isFinite(vector[i])) {
            throw refused("holds a number that is not finite");
          }
        }
      } catch (NumberFormatException e) {
        throw refused("is not a list of numbers");
      }
      return vector;
    }
    return null;
  }

  private static SolrException refused(String why) {
    return new SolrException(ErrorCode.BAD_REQUEST, "'" + PARAM + "' " + why);
  }
}
