package datafari.rag.solr.vector;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.solr.common.util.Utils;

/**
 * The chunk documents' field names, from {@code chunk_fields.json} (the sidecar's package data,
 * {@code datafari_rag/chunk_fields.json}, copied into this jar at build): the one list the sidecar
 * reads too ({@code datafari_rag/chunk_fields.py}), so neither keeps its own copy.
 */
final class ChunkFields {
  private static final Map<String, Object> SPEC = read();

  static final String PARENT = text("parent");
  static final String INDEX = text("index");
  static final String COUNT = text("count");
  static final String PARENT_VERSION = text("parentVersion");
  static final String TEXT = text("text");
  static final String FULL_TEXT = text("fullText");
  static final String HAS_VECTOR = text("hasVector");
  static final String GIVEN_CHUNKS = text("givenChunks");
  static final String FRENCH_TEXT = text("frenchText");
  static final String FRENCH_TITLE = text("frenchTitle");

  /** Parent fields a chunk does not copy: full texts, vectors and what Solr or the writer sets. */
  static final Set<String> NOT_COPIED = Set.copyOf(texts("notCopied"));

  static final List<String> NOT_COPIED_PREFIXES = List.copyOf(texts("notCopiedPrefixes"));

  private ChunkFields() {}

  /** Whether a chunk copies the parent's field of this name. */
  static boolean copied(String name) {
    return !NOT_COPIED.contains(name) && NOT_COPIED_PREFIXES.stream().noneMatch(name::startsWith);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> read() {
    try (InputStream in = ChunkFields.class.getResourceAsStream("chunk_fields.json")) {
      if (in == null) {
        throw new IllegalStateException("chunk_fields.json is missing from the plugin's jar");
      }
      return (Map<String, Object>) Utils.fromJSON(in);
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read chunk_fields.json", e);
    }
  }

  private static String text(String key) {
    Object value = SPEC.get(key);
    if (!(value instanceof String)) {
      throw new IllegalStateException("chunk_fields.json: '" + key + "' must be a string");
    }
    return (String) value;
  }

  @SuppressWarnings("unchecked")
  private static List<String> texts(String key) {
    Object value = SPEC.get(key);
    if (!(value instanceof List)) {
      throw new IllegalStateException("chunk_fields.json: '" + key + "' must be a list");
    }
    return (List<String>) value;
  }
}
