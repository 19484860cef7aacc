package datafari.rag.solr.security;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
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
 *   <li>What Solr will run is judged, not the text that was sent: the request's final parameters
 *       (after macro expansion and the handler's defaults and appends) are held to {@link
 *       ClientParams}, each query parsed as Solr will parse it and walked ({@link QueryJudge}); a
 *       macro anywhere in what the client sent, a request body and a {@code json} parameter (Solr's
 *       JSON request API, which brings parameters of its own) are refused.
 *   <li>The service account hands its users' own parameters to the same rules as {@code
 *       client.<name>}, so the sidecar's searches and direct clients' are judged alike.
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

  /** The prefix under which the service account hands over a user's own parameters. */
  public static final String CLIENT = "client.";

  private Callers callers = new Callers(Set.of(), false);

  /**
   * Each handler's configured values, read once: a reload makes new handlers and a new component.
   */
  private final Map<SolrRequestHandler, Configured> configuredBy = new ConcurrentHashMap<>();

  @Override
  public void init(NamedList<?> args) {
    super.init(args);
    callers = Callers.of(args.toSolrParams());
  }

  @Override
  public void prepare(ResponseBuilder rb) throws IOException {
    SolrQueryRequest req = rb.req;
    if (rb.components != null && ParsedQueryComponent.follows(rb.components)) {
      req.getContext().put(QueryJudge.PARSED_LATER, Boolean.TRUE);
    }
    if (callers.trusts(req)) {
      handOver(req);
      return;
    }
    Iterable<ContentStream> streams = req.getContentStreams();
    if (streams != null && streams.iterator().hasNext()) {
      throw new SolrException(
          ErrorCode.BAD_REQUEST,
          "A request body is not accepted from a client other than the service account: "
              + "send the search's parameters in the URL or as a form");
    }
    if (req.getJSON() != null) {
      throw ClientParams.refused(
          "json", "is not accepted from a client other than the service account");
    }
    // Solr has expanded the client's macros into the final parameters already: refused at the
    // source, whatever they expand to, then every final value is judged as Solr will run it
    ClientParams.noMacros(req.getOriginalParams(), "");
    Configured configured = configured(req);
    fixedBy(configured, req.getOriginalParams());
    ClientParams.check(req, configured.all(), req.getPath());
    SolrParams params = req.getParams();
    restrict(
        req,
        ClientParams.fieldFacets(params.getParams("facet.field")),
        params.getParams("fl") != null);
  }

  /**
   * The service account hands a user's own parameters over as {@code client.<name>}: each is judged
   * exactly as a direct client's {@code <name>} would be (in the request as it will run, the
   * service account's own parameters included), then becomes {@code <name>}, added to its values
   * for filters and facets, replacing it otherwise. So the sidecar's users and Solr's direct
   * clients are held to one rule.
   */
  private void handOver(SolrQueryRequest req) {
    SolrParams params = req.getParams();
    ModifiableSolrParams merged = null;
    List<Map.Entry<String, String>> own = new ArrayList<>();
    Set<String> invariants = null;
    for (Iterator<String> names = params.getParameterNamesIterator(); names.hasNext(); ) {
      String name = names.next();
      if (!name.startsWith(CLIENT)) {
        continue;
      }
      String target = name.substring(CLIENT.length());
      ClientParams.handedOver(target);
      if (invariants == null) {
        invariants = configured(req).invariants();
        merged = new ModifiableSolrParams(params);
      }
      if (invariants.contains(target)) {
        throw ClientParams.refused(name, "names a parameter this handler fixes");
      }
      String[] values = params.getParams(name);
      merged.remove(name);
      if (ClientParams.REPEATABLE.contains(target)) {
        merged.add(target, values);
      } else {
        merged.set(target, values);
      }
      for (String value : values) {
        own.add(Map.entry(target, value));
      }
    }
    if (merged == null) {
      return;
    }
    ClientParams.noMacros(req.getOriginalParams(), CLIENT);
    req.setParams(merged);
    ClientParams.judge(own, req);
    List<String> facets = new ArrayList<>();
    boolean fl = false;
    for (Map.Entry<String, String> pair : own) {
      if (pair.getKey().equals("facet.field")) {
        facets.addAll(ClientParams.fieldFacets(new String[] {pair.getValue()}));
      }
      fl |= pair.getKey().equals("fl");
    }
    restrict(req, facets, fl);
  }

  /**
   * A client's field facets count with a mincount of 1 at least (Solr's default of 0 would list
   * values found only in unreadable documents), and its {@code fl=*} is the stored fields less the
   * ACL's.
   */
  private static void restrict(SolrQueryRequest req, List<String> fieldFacets, boolean expandFl) {
    SolrParams sent = req.getParams();
    ModifiableSolrParams params = null;
    for (String field : fieldFacets) {
      String perField = "f." + field + ".facet.mincount";
      if (sent.getInt(perField, sent.getInt("facet.mincount", 0)) < 1) {
        params = params == null ? new ModifiableSolrParams(sent) : params;
        params.set(perField, "1");
      }
    }
    String[] fl = expandFl ? sent.getParams("fl") : null;
    String expanded = fl == null ? null : expandStar(fl, req.getSchema());
    if (expanded != null) {
      params = params == null ? new ModifiableSolrParams(sent) : params;
      params.set("fl", expanded);
    }
    if (params != null) {
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

  /**
   * A value the client sent for a parameter the handler fixes would be silently replaced: said
   * instead.
   */
  private static void fixedBy(Configured configured, SolrParams sent) {
    for (String name : configured.invariants()) {
      String[] values = sent.getParams(name);
      for (String value : values == null ? new String[0] : values) {
        if (!configured.all().contains(Map.entry(name, value))) {
          throw ClientParams.refused(name, "is fixed by this handler");
        }
      }
    }
  }

  /** The values the handler itself configures (defaults, appends, invariants), by name. */
  private Configured configured(SolrQueryRequest req) {
    String path = req.getPath();
    SolrRequestHandler handler = path == null ? null : req.getCore().getRequestHandler(path);
    return handler == null
        ? Configured.NONE
        : configuredBy.computeIfAbsent(handler, Configured::of);
  }

  /** A handler's own values: every (name, value) it configures, and the names it fixes. */
  private record Configured(Set<Map.Entry<String, String>> all, Set<String> invariants) {
    static final Configured NONE = new Configured(Set.of(), Set.of());

    static Configured of(SolrRequestHandler handler) {
      Set<Map.Entry<String, String>> pairs = new HashSet<>();
      Set<String> fixed = new HashSet<>();
      NamedList<?> init =
          handler instanceof RequestHandlerBase
              ? ((RequestHandlerBase) handler).getInitArgs()
              : null;
      for (String section : List.of("defaults", "appends", "invariants")) {
        Object list = init == null ? null : init.get(section);
        if (list instanceof NamedList) {
          SolrParams values = ((NamedList<?>) list).toSolrParams();
          values
              .getParameterNamesIterator()
              .forEachRemaining(
                  name -> {
                    for (String value : values.getParams(name)) {
                      pairs.add(Map.entry(name, value));
                    }
                    if (section.equals("invariants")) {
                      fixed.add(name);
                    }
                  });
        }
      }
      return new Configured(Set.copyOf(pairs), Set.copyOf(fixed));
    }
  }

  /** {@code *} in {@code fl} as the schema's stored fields less the ACL fields; null if absent. */
  static String expandStar(String[] fl, IndexSchema schema) {
    List<String> out = new ArrayList<>();
    boolean star = false;
    for (String value : fl) {
      for (String one : ClientParams.COMMAS_OR_SPACES.split(value)) {
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
