package datafari.rag.solr.textvector;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.List;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.SolrInputDocument;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.response.SolrQueryResponse;
import org.apache.solr.schema.DenseVectorField;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.update.AddUpdateCommand;
import org.apache.solr.update.processor.UpdateRequestProcessor;
import org.apache.solr.update.processor.UpdateRequestProcessorFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Embeds {@code inputField} into the dense vector {@code outputField} with a model of the store,
 * one call per document. When the embedding call fails the document is still indexed, without a
 * vector (as Solr's own processor does); the optional {@code hasVectorField} (a boolean) records
 * which case happened, so that an indexer can find and repair chunks that lack a vector. The model
 * store is the core's, registered by the knn_text_to_vector query parser.
 */
public class TextToVectorUpdateProcessorFactory extends UpdateRequestProcessorFactory {
  private static final Logger log = LoggerFactory.getLogger(MethodHandles.lookup().lookupClass());

  private String inputField;
  private String outputField;
  private String modelName;
  private String hasVectorField;

  @Override
  public void init(NamedList<?> args) {
    SolrParams params = args.toSolrParams();
    inputField = params.required().get("inputField");
    outputField = params.required().get("outputField");
    modelName = params.required().get("model");
    hasVectorField = params.get("hasVectorField");
  }

  @Override
  public UpdateRequestProcessor getInstance(
      SolrQueryRequest req, SolrQueryResponse rsp, UpdateRequestProcessor next) {
    SchemaField field = req.getSchema().getField(outputField);
    if (!(field.getType() instanceof DenseVectorField)) {
      throw new SolrException(
          ErrorCode.SERVER_ERROR, "Field '" + outputField + "' is not a DenseVectorField");
    }
    return new Processor(
        ManagedModelStore.require(ManagedModelStore.of(req.getCore()), modelName), next);
  }

  private final class Processor extends UpdateRequestProcessor {
    private final TextToVectorModel model;

    Processor(TextToVectorModel model, UpdateRequestProcessor next) {
      super(next);
      this.model = model;
    }

    @Override
    public void processAdd(AddUpdateCommand cmd) throws IOException {
      SolrInputDocument doc = cmd.getSolrInputDocument();
      Object text = doc.getFieldValue(inputField);
      boolean embedded = doc.getFieldValue(outputField) != null;
      if (!embedded && text != null && !text.toString().isBlank()) {
        try {
          List<Float> vector = new ArrayList<>();
          for (float v : model.vectorise(text.toString())) {
            vector.add(v);
          }
          doc.setField(outputField, vector);
          embedded = true;
        } catch (RuntimeException e) {
          log.error(
              "Could not embed field '{}' of document {} with model '{}': {}",
              inputField,
              cmd.getPrintableId(),
              model.getName(),
              e.getMessage());
        }
      }
      if (hasVectorField != null) {
        doc.setField(hasVectorField, embedded);
      }
      super.processAdd(cmd);
    }
  }
}
