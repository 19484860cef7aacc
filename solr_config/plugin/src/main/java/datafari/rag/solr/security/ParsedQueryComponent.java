package datafari.rag.solr.security;

import java.io.IOException;
import java.util.List;
import org.apache.solr.handler.component.QueryComponent;
import org.apache.solr.handler.component.ResponseBuilder;
import org.apache.solr.handler.component.SearchComponent;

/**
 * The door's second half, registered right after Solr's {@code query} component: it walks the main
 * query Solr itself parsed ({@code rb.getQuery()}), the very object the search will run, when the
 * door left it to be judged here. The door does so for an edismax or dismax {@code q}: those
 * parsers never nest a client's text (the door refuses a {@code uf} that would let them), so
 * parsing it has no effect to stop beforehand, and judging Solr's own parse spares a second one. A
 * query the standard parser reads, which can nest, is judged before Solr parses it. Without this
 * component after {@code query} in the chain, the door judges every query itself.
 */
public class ParsedQueryComponent extends SearchComponent {
  public static final String NAME = "secureParsedQuery";

  /** The request context's key under which the door leaves the main query to this component. */
  static final String LEFT_TO_JUDGE = ParsedQueryComponent.class.getName() + ".q";

  /** Whether {@code components} runs this component after Solr's query component. */
  static boolean follows(List<SearchComponent> components) {
    boolean parsed = false;
    for (SearchComponent component : components) {
      if (component instanceof QueryComponent) {
        parsed = true;
      } else if (parsed && component instanceof ParsedQueryComponent) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void prepare(ResponseBuilder rb) throws IOException {
    Object name = rb.req.getContext().get(LEFT_TO_JUDGE);
    if (name != null && rb.getQuery() != null) {
      QueryJudge.judgeParsed((String) name, rb.getQuery(), rb.req.getSchema());
    }
  }

  @Override
  public void process(ResponseBuilder rb) {}

  @Override
  public String getDescription() {
    return "Judges the main query Solr parsed for a client other than the service account";
  }
}
