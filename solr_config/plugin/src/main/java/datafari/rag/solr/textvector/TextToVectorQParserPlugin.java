package datafari.rag.solr.textvector;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.lucene.index.VectorEncoding;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.ResourceLoader;
import org.apache.lucene.util.ResourceLoaderAware;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.ShardParams;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.schema.DenseVectorField;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.search.QParser;
import org.apache.solr.search.QParserPlugin;
import org.apache.solr.search.SyntaxError;
import org.apache.solr.search.neural.KnnQParser;

/**
 * {@code {!knn_text_to_vector model=M f=FIELD topK=K efSearch=E}text}: embeds the query text with
 * model M and runs a kNN search on FIELD for the K nearest, the graph explored for E candidates
 * (default K; see {@link WideKnnFloatVectorQuery}). As a top-level query, every {@code fq} becomes
 * an HNSW pre-filter (inherited from Solr's {@link KnnQParser}), which is what keeps document-level
 * security exact under kNN.
 */
public class TextToVectorQParserPlugin extends QParserPlugin implements ResourceLoaderAware {
  static final String EF_SEARCH = "efSearch";
  static final int MAX_CANDIDATES = 10000; // a request may not make every segment search deeper
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
        throw new SolrException(
            ErrorCode.BAD_REQUEST, "Query string is empty, nothing to vectorise");
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
      float[] vector = shipped(type.getDimension());
      if (vector == null) {
        try {
          vector = model.vectoriseQuery(qstr);
        } catch (RuntimeException e) {
          throw new SolrException(
              ErrorCode.SERVICE_UNAVAILABLE,
              "The embedding model '" + modelName + "' failed: " + e.getMessage(),
              e);
        }
        if (!params.getBool(ShardParams.IS_SHARD, false)) { // for the shards, if there are any
          @SuppressWarnings("unchecked")
          Map<String, float[]> made =
              (Map<String, float[]>)
                  req.getContext()
                      .computeIfAbsent(QueryVectorComponent.CONTEXT, k -> new LinkedHashMap<>());
          made.put(qstr, vector);
        }
      }
      if (vector.length != type.getDimension()) {
        throw new SolrException(
            ErrorCode.BAD_REQUEST,
            "incorrect vector dimension. The vector value has size "
                + vector.length
                + " while it is expected a vector with size "
                + type.getDimension());
      }
      int topK = count(TOP_K, DEFAULT_TOP_K);
      int efSearch = count(EF_SEARCH, topK);
      return new WideKnnFloatVectorQuery(field.getName(), vector, topK, efSearch, getFilterQuery());
    }

    /** The vector the receiving node sent this shard for this very text, if any. */
    private float[] shipped(int dimension) {
      if (!params.getBool(ShardParams.IS_SHARD, false)) {
        return null;
      }
      return ShippedVectors.find(params.getParams(ShippedVectors.PARAM), qstr, dimension);
    }

    /** A local parameter that counts documents: a whole number from 1 to MAX_CANDIDATES. */
    private int count(String name, int otherwise) {
      String value = localParams.get(name);
      if (value == null || value.isBlank()) {
        return otherwise;
      }
      try {
        int n = Integer.parseInt(value.strip());
        if (n >= 1 && n <= MAX_CANDIDATES) {
          return n;
        }
      } catch (NumberFormatException e) {
        // refused below, with the others
      }
      throw new SolrException(
          ErrorCode.BAD_REQUEST,
          "'"
              + name
              + "' must be a whole number from 1 to "
              + MAX_CANDIDATES
              + ", not '"
              + value
              + "'");
    }
  }
}
