package datafari.rag.solr.security;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.Query;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.params.ShardParams;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.common.util.ContentStream;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.common.util.StrUtils;
import org.apache.solr.handler.RequestHandlerBase;
import org.apache.solr.handler.component.ResponseBuilder;
import org.apache.solr.handler.component.SearchComponent;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.request.SolrRequestHandler;
import org.apache.solr.schema.IndexSchema;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.search.DocSet;
import org.apache.solr.search.SolrIndexSearcher;

/**
 * The door of a secured search handler: registered first among its components, it holds every
 * request that is not the service account's to {@link ClientParams}' grammar, so that nothing but
 * the user's filtered documents is ever evaluated or returned.
 *
 * <ul>
 *   <li>Parameters the client sent are checked ({@link ClientParams}); a request body (Solr's
 *       JSON request API) is refused, as it would bring parameters of its own.
 *   <li>Field facets count with a {@code mincount} of 1 at least (Solr's default of 0 would list
 *       values found only in unreadable documents).
 *   <li>{@code fl=*} becomes the schema's stored fields less the six ACL fields.
 *   <li>{@code ids} (a shard asked for the fields of its documents, which Solr serves without
 *       looking at the filters) keeps only the ids of documents that pass every filter of the
 *       request, the security filter among them.
 * </ul>
 *
 * Configured with the security parser's {@code trustedPrincipals} and {@code
 * trustWithoutAuthentication}, so both agree on who is trusted.
 */
public class SecureSearchComponent extends SearchComponent {
  public static final String NAME = "secureSearch";

  private Callers callers = new Callers(Set.of(), false);
  /** Each handler's configured values, read once: a reload makes new handlers and a new component. */
  private final Map<SolrRequestHandler, Set<Map.Entry<String, String>>> configuredBy =
      new ConcurrentHashMap<>();

  @Override
  public void init(NamedList<?> args) {
    super.init(args);
    callers = Callers.of(args.toSolrParams());
  }

  @Override
  public void prepare(ResponseBuilder rb) throws IOException {
    SolrQueryRequest req = rb.req;
    if (callers.trusts(req)) {
      return;
    }
    Iterable<ContentStream> streams = req.getContentStreams();
    if (streams != null && streams.iterator().hasNext()) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST,
          "A request body is not accepted from a client other than the service account: "
              + "send the search's parameters in the URL or as a form");
    }
    SolrParams sent = req.getOriginalParams();
    ClientParams.check(sent, configured(req), req.getPath());

    ModifiableSolrParams params = new ModifiableSolrParams(req.getParams());
    boolean changed = false;
    if (params.get("facet.mincount") == null) {
      for (String field : ClientParams.fieldFacets(params)) {
        String perField = "f." + field + ".facet.mincount";
        if (params.get(perField) == null) {
          params.set(perField, "1");
          changed = true;
        }
      }
    }
    String[] fl = params.getParams("fl");
    if (fl != null) {
      String expanded = expandStar(fl, req.getSchema());
      if (expanded != null) {
        params.set("fl", expanded);
        changed = true;
      }
    }
    if (changed) {
      req.setParams(params);
    }
  }

  @Override
  public void process(ResponseBuilder rb) throws IOException {
    SolrQueryRequest req = rb.req;
    String ids = req.getParams().get(ShardParams.IDS);
    if (ids == null || callers.trusts(req)) {
      return;
    }
    List<Query> filters = rb.getFilters();
    if (filters == null || filters.isEmpty()) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST, "'ids' needs the handler's security filter, which this one lacks");
    }
    SolrIndexSearcher searcher = req.getSearcher();
    DocSet readable = searcher.getDocSet(filters);
    SchemaField key = req.getSchema().getUniqueKeyField();
    StringJoiner kept = new StringJoiner(",");
    for (String id : StrUtils.splitSmart(ids, ",", true)) {
      int doc = searcher.getFirstMatch(new Term(key.getName(), key.getType().toInternal(id)));
      if (doc >= 0 && readable.exists(doc)) {
        kept.add(id.replace("\\", "\\\\").replace(",", "\\,"));
      }
    }
    ModifiableSolrParams params = new ModifiableSolrParams(req.getParams());
    params.set(ShardParams.IDS, kept.toString());
    req.setParams(params);
  }

  /** The values the handler itself configures (defaults, appends, invariants), by name. */
  private Set<Map.Entry<String, String>> configured(SolrQueryRequest req) {
    String path = req.getPath();
    SolrRequestHandler handler = path == null ? null : req.getCore().getRequestHandler(path);
    return handler == null ? Set.of() : configuredBy.computeIfAbsent(handler, SecureSearchComponent::configuredIn);
  }

  private static Set<Map.Entry<String, String>> configuredIn(SolrRequestHandler handler) {
    Set<Map.Entry<String, String>> pairs = new HashSet<>();
    if (handler instanceof RequestHandlerBase) {
      NamedList<?> init = ((RequestHandlerBase) handler).getInitArgs();
      for (String section : List.of("defaults", "appends", "invariants")) {
        Object list = init == null ? null : init.get(section);
        if (list instanceof NamedList) {
          SolrParams values = ((NamedList<?>) list).toSolrParams();
          values.getParameterNamesIterator()
              .forEachRemaining(
                  name -> {
                    for (String value : values.getParams(name)) {
                      pairs.add(Map.entry(name, value));
                    }
                  });
        }
      }
    }
    return Set.copyOf(pairs);
  }

  /** {@code *} in {@code fl} as the schema's stored fields less the ACL fields; null if absent. */
  static String expandStar(String[] fl, IndexSchema schema) {
    List<String> out = new ArrayList<>();
    boolean star = false;
    for (String value : fl) {
      for (String one : value.split("[,\\s]+")) {
        if (one.equals("*")) {
          star = true;
        } else if (!one.isEmpty()) {
          out.add(one);
        }
      }
    }
    if (!star) {
      return null;
    }
    for (SchemaField field : schema.getFields().values()) {
      boolean returned = field.stored() || (field.hasDocValues() && field.useDocValuesAsStored());
      if (returned && !ClientParams.ACL_FIELD.matcher(field.getName()).find()) {
        out.add(field.getName());
      }
    }
    return String.join(",", out);
  }

  @Override
  public String getDescription() {
    return "Holds clients other than the service account to the parameters that keep a search "
        + "within the documents they may read";
  }
}
