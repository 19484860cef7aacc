package datafari.rag.solr.language;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.SolrInputField;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.update.AddUpdateCommand;
import org.apache.solr.update.processor.UpdateRequestProcessor;
import org.apache.solr.update.processor.UpdateRequestProcessorFactory;

/**
 * FileShare's language step, for every writer (ManifoldCF's Solr output, an admin's curl, the
 * sidecar): a document sent without {@code language} gets the one detected in its text ({@link
 * LanguageDetection}), and a French document — detected or declared — gets its French-analysed
 * copies ({@code content_fr} from the text, {@code title_fr} from the title; every text is analysed
 * as English by the schema's copy fields). Placed before the distributed processor, as Solr places
 * its own language identifiers, so that replicas and the chunk processor see the fields. An atomic
 * update that does not set the text in plain is left as it is.
 */
public class LanguageUpdateProcessorFactory extends UpdateRequestProcessorFactory {
  private String textField;
  private String titleField;
  private String languageField;
  private String frenchTextField;
  private String frenchTitleField;
  private LanguageDetection detection;

  @Override
  public void init(NamedList<?> args) {
    SolrParams params = args.toSolrParams();
    textField = params.get("textField", "exactContent");
    titleField = params.get("titleField", "title");
    languageField = params.get("languageField", "language");
    frenchTextField = params.get("frenchTextField", "content_fr");
    frenchTitleField = params.get("frenchTitleField", "title_fr");
    try {
      detection =
          new LanguageDetection(
              params.getInt("sampleChars", 2000),
              params.getInt("minLetters", 20),
              params.getDouble("minConfidence", 0.9));
    } catch (IllegalArgumentException e) {
      throw new SolrException(ErrorCode.SERVER_ERROR, e.getMessage(), e);
    }
  }

  @Override
  public UpdateRequestProcessor getInstance(
      SolrQueryRequest req, SolrQueryResponse rsp, UpdateRequestProcessor next) {
    return new UpdateRequestProcessor(next) {
      @Override
      public void processAdd(AddUpdateCommand cmd) throws IOException {
        label(cmd.getSolrInputDocument());
        super.processAdd(cmd);
      }
    };
  }

  /** Sets the document's language when it has none, and its French copies when it is French. */
  void label(SolrInputDocument doc) {
    String text = plain(doc.getField(textField));
    if (text == null) {
      return; // no text, or an atomic operation on it: nothing to read
    }
    SolrInputField given = doc.getField(languageField);
    String language;
    if (given == null
        || given.getValueCount() == 0
        || (given.getFirstValue() instanceof String blank && blank.isBlank())) {
      language = detection.detect(text);
      if (language == null) {
        return;
      }
      doc.setField(languageField, language);
    } else if (given.getFirstValue() instanceof String declared) {
      language = declared;
    } else {
      return; // an atomic operation on the language: left to the writer
    }
    if (language.toLowerCase(Locale.ROOT).startsWith("fr")) {
      if (doc.getField(frenchTextField) == null) {
        doc.setField(frenchTextField, text);
      }
      String title = plain(doc.getField(titleField));
      if (title != null && doc.getField(frenchTitleField) == null) {
        doc.setField(frenchTitleField, title);
      }
    }
  }

  /** The field's values joined by lines, or null when absent, empty or an atomic operation. */
  private static String plain(SolrInputField field) {
    if (field == null || field.getValueCount() == 0) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    for (Object value : field.getValues()) {
      if (value instanceof Map) {
        return null;
      }
      parts.add(String.valueOf(value));
    }
    String joined = String.join("\n", parts);
    return joined.isBlank() ? null : joined;
  }
}
