package datafari.rag.solr.textvector;

import java.io.IOException;
import org.apache.lucene.index.VectorEncoding;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.ResourceLoader;
import org.apache.lucene.util.ResourceLoaderAware;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.schema.DenseVectorField;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.search.QParser;
import org.apache.solr.search.QParserPlugin;
import org.apache.solr.search.SyntaxError;
import org.apache.solr.search.neural.KnnQParser;

/**
 * {@code {!knn_text_to_vector model=M f=FIELD topK=K}text}: embeds the query text with model M
 * and runs a kNN search on FIELD. As a top-level query, every {@code fq} becomes an HNSW
 * pre-filter (inherited from Solr's {@link KnnQParser}), which is what keeps document-level
 * security exact under kNN.
 */
public class TextToVectorQParserPlugin extends QParserPlugin implements ResourceLoaderAware {
  private final ModelStoreObserver models = new ModelStoreObserver();

  @Override
  public void inform(ResourceLoader loader) throws IOException {
    models.inform(loader);
  }

  @Override
  public QParser createParser(
      String qstr, SolrParams localParams, SolrParams params, SolrQueryRequest req) {
    return new Parser(qstr, localParams, params, req);
  }

  private final class Parser extends KnnQParser {
    Parser(String qstr, SolrParams localParams, SolrParams params, SolrQueryRequest req) {
      super(qstr, localParams, params, req);
    }

    @Override
    public Query parse() throws SyntaxError {
      if (qstr == null || qstr.isBlank()) {
        throw new SolrException(ErrorCode.BAD_REQUEST, "Query string is empty, nothing to vectorise");
      }
      String modelName = localParams.get("model");
      if (modelName == null || modelName.isBlank()) {
        throw new SolrException(ErrorCode.BAD_REQUEST, "The 'model' parameter is missing");
      }
      TextToVectorModel model = models.require(modelName);
      SchemaField field = req.getSchema().getField(getFieldName());
      DenseVectorField type = getCheckedFieldType(field);
      if (type.getVectorEncoding() != VectorEncoding.FLOAT32) {
        throw new SolrException(
            ErrorCode.BAD_REQUEST, "Vector encoding not supported: " + type.getVectorEncoding());
      }
      float[] vector;
      try {
        vector = model.vectorise(qstr);
      } catch (RuntimeException e) {
        throw new SolrException(
            ErrorCode.SERVICE_UNAVAILABLE,
            "The embedding model '" + modelName + "' failed: " + e.getMessage(),
            e);
      }
      if (vector.length != type.getDimension()) {
        throw new SolrException(
            ErrorCode.BAD_REQUEST,
            "incorrect vector dimension. The vector value has size "
                + vector.length
                + " while it is expected a vector with size "
                + type.getDimension());
      }
      int topK = localParams.getInt(TOP_K, DEFAULT_TOP_K);
      return new KnnFloatVectorQuery(field.getName(), vector, topK, getFilterQuery());
    }
  }
}
