package datafari.rag.solr.textvector;

import java.util.Map;
import org.apache.solr.handler.component.ResponseBuilder;
import org.apache.solr.handler.component.SearchComponent;
import org.apache.solr.handler.component.ShardRequest;

/**
 * Sends each shard the vectors the receiving node made for the request's query texts ({@link
 * ShippedVectors}): the shards search with them instead of embedding the text again. Only the node
 * that parses a query first (the one the client called) embeds it.
 */
public class QueryVectorComponent extends SearchComponent {
  /** The request context entry the query parser fills: query text to vector. */
  static final String CONTEXT = "datafari.rag.queryVectors";

  @Override
  public void prepare(ResponseBuilder rb) {}

  @Override
  public void process(ResponseBuilder rb) {}

  @Override
  public void modifyRequest(ResponseBuilder rb, SearchComponent who, ShardRequest sreq) {
    Object made = rb.req.getContext().get(CONTEXT);
    if (!(made instanceof Map<?, ?> vectors) || sreq.params.get(ShippedVectors.PARAM) != null) {
      return;
    }
    for (Map.Entry<?, ?> entry : vectors.entrySet()) {
      sreq.params.add(
          ShippedVectors.PARAM,
          ShippedVectors.encode((String) entry.getKey(), (float[]) entry.getValue()));
    }
  }

  @Override
  public String getDescription() {
    return "Sends the query vectors made by the node that received a request to its shards";
  }
}
