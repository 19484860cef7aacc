package datafari.rag.solr.vector;

import dev.langchain4j.data.document.Document;
import dev.langchain4j.data.document.DocumentSplitter;
import dev.langchain4j.data.document.splitter.DocumentByCharacterSplitter;
import dev.langchain4j.data.document.splitter.DocumentByLineSplitter;
import dev.langchain4j.data.document.splitter.DocumentByParagraphSplitter;
import dev.langchain4j.data.document.splitter.DocumentBySentenceSplitter;
import dev.langchain4j.data.document.splitter.DocumentSplitters;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.TokenCountEstimator;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a document's text into chunks with langchain4j's splitters, Datafari's {@code
 * vector.splitter} names (recursive, paragraph, sentence, line, character), then drops the chunks
 * the filters reject: shorter than {@code minLength} characters, or with a share of letters and
 * digits below {@code minAlnumRatio} (tables of dots, separators).
 */
final class Chunker {
  static final List<String> SPLITTERS =
      List.of(
          "recursiveSplitter",
          "paragraphSplitter",
          "sentenceSplitter",
          "lineSplitter",
          "characterSplitter");

  private final DocumentSplitter splitter;
  private final int minLength;
  private final double minAlnumRatio;

  /**
   * @param tokens the model's token counter, or null to measure {@code size} and {@code overlap} in
   *     characters
   */
  Chunker(
      String name,
      int size,
      int overlap,
      TokenCountEstimator tokens,
      int minLength,
      double minAlnumRatio) {
    if (size < 1) {
      throw new IllegalArgumentException("vector.chunksize must be at least 1, not " + size);
    }
    if (overlap < 0 || overlap >= size) {
      throw new IllegalArgumentException(
          "vector.maxoverlap must be between 0 and vector.chunksize - 1, not " + overlap);
    }
    this.splitter = splitter(name, size, overlap, tokens);
    this.minLength = minLength;
    this.minAlnumRatio = minAlnumRatio;
  }

  /** A null {@code tokens} makes langchain4j's splitters measure in characters. */
  private static DocumentSplitter splitter(
      String name, int size, int overlap, TokenCountEstimator tokens) {
    switch (name) {
      case "recursiveSplitter":
        return DocumentSplitters.recursive(size, overlap, tokens);
      case "paragraphSplitter":
        return new DocumentByParagraphSplitter(size, overlap, tokens);
      case "sentenceSplitter":
        return new DocumentBySentenceSplitter(size, overlap, tokens);
      case "lineSplitter":
        return new DocumentByLineSplitter(size, overlap, tokens);
      case "characterSplitter":
        return new DocumentByCharacterSplitter(size, overlap, tokens);
      default:
        throw new IllegalArgumentException(
            "vector.splitter must be one of " + SPLITTERS + ", not '" + name + "'");
    }
  }

  List<String> split(String text) {
    List<String> chunks = new ArrayList<>();
    if (text == null || text.isBlank()) {
      return chunks;
    }
    for (TextSegment segment : splitter.split(Document.from(text))) {
      String chunk = segment.text().strip();
      if (keep(chunk)) {
        chunks.add(chunk);
      }
    }
    return chunks;
  }

  private boolean keep(String chunk) {
    if (chunk.length() < minLength || chunk.isEmpty()) {
      return false;
    }
    long alnum = chunk.codePoints().filter(Character::isLetterOrDigit).count();
    return (double) alnum / chunk.codePointCount(0, chunk.length()) >= minAlnumRatio;
  }
}
