package datafari.rag.solr.language;

import com.optimaize.langdetect.DetectedLanguage;
import com.optimaize.langdetect.LanguageDetector;
import com.optimaize.langdetect.LanguageDetectorBuilder;
import com.optimaize.langdetect.ngram.NgramExtractors;
import com.optimaize.langdetect.profiles.LanguageProfileReader;
import com.optimaize.langdetect.text.CommonTextObjectFactories;
import com.optimaize.langdetect.text.TextObjectFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A document's language when its writer sent none, with the rules of the sidecar's detection
 * ({@code datafari_rag/text/language.py}): the first {@code sampleChars} characters are read; a
 * guess below {@code minConfidence}, or on fewer than {@code minLetters} letters, gives no language
 * rather than a wrong one (a wrong {@code fr} would analyse English text with the French chain).
 * The detector is Optimaize's (the one Apache Tika ships), its profiles inside its jar; built once
 * per JVM, it is thread-safe.
 */
public final class LanguageDetection {
  private final int sampleChars;
  private final int minLetters;
  private final double minConfidence;
  private final TextObjectFactory texts = CommonTextObjectFactories.forDetectingOnLargeText();

  public LanguageDetection(int sampleChars, int minLetters, double minConfidence) {
    if (sampleChars < 1 || minLetters < 0 || minConfidence < 0 || minConfidence > 1) {
      throw new IllegalArgumentException(
          "language detection needs sampleChars >= 1, minLetters >= 0 and 0 <= minConfidence <= 1");
    }
    this.sampleChars = sampleChars;
    this.minLetters = minLetters;
    this.minConfidence = minConfidence;
  }

  /** The ISO 639-1 code of the text's language, or null when it cannot be told. */
  public String detect(String text) {
    if (text == null) {
      return null;
    }
    String sample = text.length() > sampleChars ? text.substring(0, sampleChars) : text;
    if (sample.codePoints().filter(Character::isLetter).count() < minLetters) {
      return null;
    }
    List<DetectedLanguage> found = detector().getProbabilities(texts.forText(sample));
    if (found.isEmpty() || found.get(0).getProbability() < minConfidence) {
      return null;
    }
    return found.get(0).getLocale().getLanguage();
  }

  private static LanguageDetector detector() {
    return Detector.INSTANCE;
  }

  /** Read on first use (the profiles take a second), once per JVM, by the class loader's lock. */
  private static final class Detector {
    static final LanguageDetector INSTANCE = build();

    private static LanguageDetector build() {
      try {
        return LanguageDetectorBuilder.create(NgramExtractors.standard())
            .withProfiles(new LanguageProfileReader().readAllBuiltIn())
            .build();
      } catch (IOException e) {
        throw new UncheckedIOException("Could not read the language profiles", e);
      }
    }
  }
}
