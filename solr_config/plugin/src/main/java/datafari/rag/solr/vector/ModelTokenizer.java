package datafari.rag.solr.vector;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.model.TokenCountEstimator;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.solr.core.SolrResourceLoader;

/**
 * Counts tokens the way the embedding model does: its own {@code tokenizer.json} (a Hugging Face
 * tokenizer, read from the configset), without the special tokens the model adds around a text. One
 * tokenizer per configset resource, shared by every core that names it.
 */
final class ModelTokenizer implements TokenCountEstimator {
  private static final Map<String, ModelTokenizer> LOADED = new ConcurrentHashMap<>();

  private final HuggingFaceTokenizer tokenizer;

  private ModelTokenizer(HuggingFaceTokenizer tokenizer) {
    this.tokenizer = tokenizer;
  }

  static ModelTokenizer of(SolrResourceLoader loader, String resource) {
    String key = loader.getInstancePath() + "#" + resource;
    return LOADED.computeIfAbsent(key, k -> load(loader, resource));
  }

  private static ModelTokenizer load(SolrResourceLoader loader, String resource) {
    try (InputStream in = loader.openResource(resource)) {
      return new ModelTokenizer(
          HuggingFaceTokenizer.newInstance(
              in, Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false")));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException(
          "Cannot read the embedding model's tokenizer '"
              + resource
              + "' from the configset: "
              + e.getMessage(),
          e);
    }
  }

  @Override
  public int estimateTokenCountInText(String text) {
    return tokenizer.encode(text, false, false).getIds().length;
  }

  @Override
  public int estimateTokenCountInMessage(ChatMessage message) {
    throw new UnsupportedOperationException("Only texts are counted");
  }

  @Override
  public int estimateTokenCountInMessages(Iterable<ChatMessage> messages) {
    throw new UnsupportedOperationException("Only texts are counted");
  }
}
