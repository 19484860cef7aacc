package datafari.rag.solr.security;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.search.QParserPlugin;
import org.apache.solr.search.QueryParsing;

/**
 * The parameters a client other than the service account may have Solr run on a secured search
 * handler, each with the forms it may take, judged on what Solr will execute: the request's final
 * parameters, after macro expansion, the handler's defaults and appends, and a query's own escapes.
 * Everything that could evaluate a query outside the user's filtered documents — other query
 * parsers ({@code join}, {@code graph}, {@code frange}, {@code _query_}, functions), transformers
 * ({@code [subquery]}, {@code [child]}, {@code [explain]}), {@code expand}, {@code terms}, {@code
 * debug}, {@code json.facet}, MoreLikeThis, spellcheck, stats, grouping, {@code shards}, macros —
 * is not on the list, and the six ACL fields may not be named anywhere. A query ({@code q}, {@code
 * fq}, {@code facet.query}, {@code hl.q}) is parsed and walked by {@link QueryJudge}. The grammar
 * is the one DatafariUI uses: an edismax or lucene {@code q}, {@code fq} with {@code {!tag}},
 * facets with {@code {!ex}}/{@code {!key}} and a {@code mincount} of at least 1, highlighting and
 * sorting on plain fields, bounded paging.
 *
 * <p>The sidecar hands a user's own parameters to the same rules as {@code client.<name>} ({@link
 * SecureSearchComponent}); Solr's distributed search forwards a request to each shard as the same
 * user, with a few parameters of its own (listed in {@link #RULES} too) and the handler's
 * configured values, which are accepted as they are.
 */
final class ClientParams {
  static final Pattern ACL_FIELD = Pattern.compile("(allow|deny)_token_", Pattern.CASE_INSENSITIVE);

  /** One name or several, comma-separated: tags, facet keys, exclusions. */
  static final Pattern NAMES =
      Pattern.compile("[A-Za-z0-9_\\-.]{1,100}(,[A-Za-z0-9_\\-.]{1,100})*");

  static final String MACRO = "${";
  private static final Pattern FIELD = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_\\-.]{1,100}");
  private static final Pattern LOCAL = Pattern.compile("^\\{!([^{}]*)\\}(.*)$", Pattern.DOTALL);
  private static final Pattern PER_FIELD = Pattern.compile("^f\\.([^.]+)\\.((?:facet|hl)\\..+)$");
  private static final Pattern REFINE_TERMS = Pattern.compile("^[A-Za-z0-9_\\-.]{1,100}__terms$");
  private static final Pattern SORT = Pattern.compile("^([A-Za-z_][A-Za-z0-9_]*)\\s+(asc|desc)$");
  private static final Pattern DATE_MATH = Pattern.compile("^[0-9A-Za-z:.+\\-/*]{1,100}$");
  private static final Pattern FIELD_BOOST =
      Pattern.compile("^([A-Za-z_][A-Za-z0-9_]*)(\\^[0-9.]+)?$");
  private static final Pattern MIN_MATCH = Pattern.compile("^[0-9%<>\\- ]{1,50}$");
  private static final Pattern QUERY_VECTOR =
      Pattern.compile("^[0-9a-f]{16}:[0-9eE.,+\\-]{1,65536}$");

  /**
   * A cursor: {@code *} or the Base64 totem Solr hands out (sort values of a readable document).
   */
  private static final Pattern CURSOR = Pattern.compile("^(\\*|[A-Za-z0-9+/=_\\-]{1,4096})$");

  private static final Pattern SHARD_URLS = Pattern.compile("^[A-Za-z0-9:/._\\-|]{1,4096}$");
  private static final Pattern REQUEST_ID = Pattern.compile("^[A-Za-z0-9_\\-.:]{1,300}$");
  private static final Pattern STATE_VERSIONS = Pattern.compile("^[A-Za-z0-9_\\-.:|]{1,4096}$");
  private static final Pattern ROUTE = Pattern.compile("^[A-Za-z0-9_\\-.!/,:]{1,500}$");
  private static final Pattern VERSION = Pattern.compile("^[0-9.]{1,10}$");
  private static final Pattern CACHE_BUSTER = Pattern.compile("^[A-Za-z0-9_\\-.]{1,100}$");
  private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}");

  /**
   * Separators of field lists, compiled once ({@code String.split} would compile them per call).
   */
  static final Pattern COMMAS_OR_SPACES = Pattern.compile("[,\\s]+");

  private static final Pattern SPACES = Pattern.compile("\\s+");
  private static final int MAX_QUERY = 10_000;
  private static final int MAX_REPEATS = 100;

  /**
   * One rule: checks a value of the named parameter of a request, or throws a 400 that says why.
   */
  @FunctionalInterface
  interface Rule {
    void check(String name, String value, SolrQueryRequest req);
  }

  private static final Rule BOOL = choice("true", "false", "on", "off");

  /** {@code q}: parsed by the request's {@code defType}, no local parameters. */
  private static final Rule MAIN_QUERY =
      (name, value, req) -> {
        length(name, value, MAX_QUERY);
        QueryJudge.judgeMain(
            name,
            value,
            req.getParams().get(QueryParsing.DEFTYPE, QParserPlugin.DEFAULT_QTYPE),
            req);
      };

  /**
   * {@code hl.q}: parsed as the highlighter parses it ({@code hl.qparser}, else {@code defType}).
   */
  private static final Rule HIGHLIGHT_QUERY =
      (name, value, req) -> {
        SolrParams params = req.getParams();
        query(
            name, value, params.get("hl.qparser", params.get(QueryParsing.DEFTYPE)), Set.of(), req);
      };

  private static final Rule FIELD_RULE = (name, value, req) -> field(name, value);
  private static final Rule FIELDS =
      (name, value, req) -> {
        for (String one : COMMAS_OR_SPACES.split(value)) {
          if (!one.isEmpty()) {
            field(name, one);
          }
        }
      };
  private static final Rule BOOSTED_FIELDS =
      (name, value, req) -> {
        for (String one : SPACES.split(value.strip())) {
          Matcher found = FIELD_BOOST.matcher(one);
          if (!one.isEmpty() && !found.matches()) {
            throw refused(name, "must list fields, each with an optional ^boost");
          }
          if (!one.isEmpty()) {
            field(name, found.group(1));
          }
        }
      };

  /**
   * Text that is never parsed (the ids a shard returns, the terms a facet refines, a user's name).
   */
  private static Rule text(int max) {
    return (name, value, req) -> {
      length(name, value, max);
      if (CONTROL.matcher(value).find()) {
        throw refused(name, "may not hold control characters");
      }
    };
  }

  /**
   * The parameter names a client may send, each with its rule; {@code f.<field>.<option>} takes the
   * option's rule with a plain, non-ACL field.
   */
  static final Map<String, Rule> RULES =
      Map.ofEntries(
          // the query
          Map.entry("q", MAIN_QUERY),
          Map.entry("q.op", choice("AND", "OR")),
          Map.entry("defType", choice("edismax", "lucene", "dismax")),
          Map.entry("qf", BOOSTED_FIELDS),
          Map.entry("pf", BOOSTED_FIELDS),
          Map.entry("df", FIELD_RULE),
          Map.entry("mm", pattern(MIN_MATCH, "must be a minimum-should-match like 2 or 75%")),
          Map.entry("tie", number(0, 1)),
          Map.entry("ps", number(0, 100)),
          Map.entry("qs", number(0, 100)),
          Map.entry("sow", BOOL),
          Map.entry("lowercaseOperators", BOOL),
          Map.entry(
              "fq",
              (name, value, req) ->
                  query(name, value, QParserPlugin.DEFAULT_QTYPE, Set.of("tag"), req)),
          // the text-to-vector handler (its q dereferences these; the text is embedded, never
          // parsed)
          Map.entry("queryrag", text(MAX_QUERY)),
          Map.entry("topK", number(1, 1000)),
          Map.entry("efSearch", number(1, 1000)),
          Map.entry("model", pattern(NAME, "must name a model")),
          Map.entry("vectorField", FIELD_RULE),
          // the results
          Map.entry("start", number(0, 10_000)),
          Map.entry("rows", number(0, 10_000)),
          Map.entry("sort", ClientParams::sort),
          Map.entry("fl", ClientParams::returnFields),
          Map.entry("cursorMark", pattern(CURSOR, "must be * or a cursor mark Solr returned")),
          Map.entry("timeAllowed", number(-1, 600_000)),
          // facets counted over the user's documents only, values of readable documents only
          Map.entry("facet", BOOL),
          Map.entry(
              "facet.field",
              (name, value, req) -> facetTarget(name, value, Set.of("ex", "key", "terms"))),
          Map.entry(
              "facet.range", (name, value, req) -> facetTarget(name, value, Set.of("ex", "key"))),
          Map.entry(
              "facet.query",
              (name, value, req) ->
                  query(name, value, QParserPlugin.DEFAULT_QTYPE, Set.of("ex", "key"), req)),
          Map.entry("facet.mincount", number(1, Integer.MAX_VALUE)),
          Map.entry("facet.limit", number(-1, 10_000)),
          Map.entry("facet.offset", number(0, 1_000_000)),
          Map.entry("facet.sort", choice("count", "index")),
          Map.entry("facet.missing", BOOL),
          Map.entry("facet.method", choice("enum", "fc", "fcs")),
          Map.entry("facet.prefix", (name, value, req) -> plainText(name, value, 200)),
          Map.entry("facet.overrequest.ratio", number(0, 100)),
          Map.entry("facet.overrequest.count", number(0, 10_000)),
          Map.entry(
              "facet.range.start", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.end", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.gap", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.hardened", BOOL),
          Map.entry("facet.range.include", choice("lower", "upper", "edge", "outer", "all")),
          Map.entry("facet.range.other", choice("before", "after", "between", "none", "all")),
          Map.entry("facet.range.method", choice("filter", "dv")),
          // highlighting of the returned documents, on plain fields
          Map.entry("hl", BOOL),
          Map.entry("hl.fl", FIELDS),
          Map.entry("hl.q", HIGHLIGHT_QUERY),
          Map.entry("hl.snippets", number(1, 100)),
          Map.entry("hl.fragsize", number(0, 100_000)),
          Map.entry("hl.method", choice("unified", "original", "fastVector")),
          Map.entry("hl.encoder", choice("", "html")),
          Map.entry("hl.tag.pre", (name, value, req) -> plainText(name, value, 100)),
          Map.entry("hl.tag.post", (name, value, req) -> plainText(name, value, 100)),
          Map.entry("hl.simple.pre", (name, value, req) -> plainText(name, value, 100)),
          Map.entry("hl.simple.post", (name, value, req) -> plainText(name, value, 100)),
          Map.entry("hl.requireFieldMatch", BOOL),
          Map.entry("hl.usePhraseHighlighter", BOOL),
          Map.entry("hl.highlightMultiTerm", BOOL),
          Map.entry("hl.defaultSummary", BOOL),
          Map.entry("hl.maxAnalyzedChars", number(0, 10_000_000)),
          Map.entry(
              "hl.bs.type", choice("SEPARATOR", "SENTENCE", "WORD", "CHARACTER", "LINE", "WHOLE")),
          // the response's form
          Map.entry("wt", choice("json", "xml", "javabin")),
          Map.entry("version", pattern(VERSION, "must be a version number")),
          Map.entry("indent", BOOL),
          Map.entry("json.nl", choice("flat", "map", "arrarr", "arrmap", "arrntv")),
          Map.entry("omitHeader", BOOL),
          Map.entry("echoParams", choice("none", "explicit", "all")),
          Map.entry("_", pattern(CACHE_BUSTER, "must be a plain token (a browser's cache buster)")),
          // the user, which only the service account may name: ignored for anyone else
          Map.entry(ManifoldCFSecurityQParserPlugin.USER_PARAM, text(200)),
          Map.entry(ManifoldCFSecurityQParserPlugin.GROUP_PARAM, text(200)),
          // what Solr's distributed search adds to a shard's request (as the same user)
          Map.entry("distrib", BOOL),
          Map.entry("isShard", BOOL),
          Map.entry("shard.url", pattern(SHARD_URLS, "must be the shard addresses Solr sends")),
          Map.entry("shards.purpose", number(0, Integer.MAX_VALUE)),
          Map.entry("shards.tolerant", BOOL),
          Map.entry("fsv", BOOL),
          Map.entry("NOW", number(0, Long.MAX_VALUE)),
          Map.entry(
              "TZ", pattern(Pattern.compile("^[A-Za-z0-9_/+\\-:]{1,50}$"), "must be a time zone")),
          Map.entry("rid", pattern(REQUEST_ID, "must be a request id as Solr makes them")),
          Map.entry("_stateVer_", pattern(STATE_VERSIONS, "must be collection:version pairs")),
          Map.entry("_route_", pattern(ROUTE, "must be a routing key")),
          Map.entry("distrib.singlePass", BOOL),
          // the query's vector, made by the node the client called (a text's key, then numbers)
          Map.entry(
              "queryVector", pattern(QUERY_VECTOR, "must be a query text's key and its vector")),
          // the ids a shard returns the fields of: only those the user may read (the guard checks)
          Map.entry("ids", text(100_000)));

  /** The parameters whose values add up (several filters, several facets); others take one. */
  static final Set<String> REPEATABLE = Set.of("fq", "facet.field", "facet.query", "facet.range");

  /** What only Solr itself or the service account speaks of: never handed over as a user's. */
  private static final Set<String> NOT_HANDED_OVER =
      Set.of(
          "ids",
          "distrib",
          "isShard",
          "shard.url",
          "shards.purpose",
          "shards.tolerant",
          "fsv",
          "NOW",
          "rid",
          "_stateVer_",
          "_route_",
          "distrib.singlePass",
          "queryVector",
          ManifoldCFSecurityQParserPlugin.USER_PARAM,
          ManifoldCFSecurityQParserPlugin.GROUP_PARAM);

  private ClientParams() {}

  /** No macro anywhere in what a client sent: Solr would expand it before any rule could see it. */
  static void noMacros(SolrParams sent, String prefix) {
    for (Iterator<String> names = sent.getParameterNamesIterator(); names.hasNext(); ) {
      String name = names.next();
      if (!name.startsWith(prefix)) {
        continue;
      }
      if (name.contains(MACRO)) {
        throw refused(name, "may not be a macro (${…})");
      }
      String[] values = sent.getParams(name);
      for (String value : values == null ? new String[0] : values) {
        if (value != null && value.contains(MACRO)) {
          throw refused(
              name.substring(prefix.length()),
              "may not hold a macro (${…}): Solr would replace it by another parameter's value");
        }
      }
    }
  }

  /**
   * Checks every parameter Solr will read for this request; a value equal to one the handler itself
   * configures (a default, an append, an invariant — forwarded by Solr to each shard) is accepted
   * as it is, and so is {@code qt} naming the handler itself (Solr sends it to the shards of a
   * handler other than /select). Returns the client's own (name, value) pairs.
   */
  static List<Map.Entry<String, String>> check(
      SolrQueryRequest req, Set<Map.Entry<String, String>> configured, String path) {
    SolrParams params = req.getParams();
    List<Map.Entry<String, String>> own = new ArrayList<>();
    for (Iterator<String> names = params.getParameterNamesIterator(); names.hasNext(); ) {
      String name = names.next();
      String[] values = params.getParams(name);
      if (values == null) {
        continue;
      }
      for (String value : values) {
        if (!configured.contains(Map.entry(name, value))
            && !(name.equals("qt") && value.equals(path))) {
          own.add(Map.entry(name, value));
        }
      }
    }
    judge(own, req);
    return own;
  }

  /** Judges a client's own (name, value) pairs against the request as Solr will run it. */
  static void judge(List<Map.Entry<String, String>> own, SolrQueryRequest req) {
    Map<String, Integer> counts = new java.util.HashMap<>();
    Set<String> fieldFacets = new LinkedHashSet<>();
    Set<String> rangeFacets = new LinkedHashSet<>();
    for (Map.Entry<String, String> pair : own) {
      String name = pair.getKey();
      String value = pair.getValue();
      int count = counts.merge(name, 1, Integer::sum);
      if (count > MAX_REPEATS) {
        throw refused(name, "may be given at most " + MAX_REPEATS + " times");
      }
      if (value == null) {
        continue;
      }
      if (value.contains(MACRO)) {
        throw refused(name, "may not hold a macro (${…})");
      }
      rule(name).check(name, value, req);
      if (name.equals("facet.field")) {
        fieldFacets.add(target(value));
      } else if (name.equals("facet.range")) {
        rangeFacets.add(target(value));
      }
    }
    for (String field : fieldFacets) {
      if (rangeFacets.contains(field)) {
        throw refused("facet.field", "and facet.range may not name the same field (" + field + ")");
      }
    }
    // a field facet with mincount 0 would list values of documents the user may not read (Solr
    // forwards 0 for range facets to shards: range buckets hold no value of a document)
    for (Map.Entry<String, String> pair : own) {
      Matcher perField = PER_FIELD.matcher(pair.getKey());
      if (perField.matches()
          && perField.group(2).equals("facet.mincount")
          && !rangeFacets.contains(perField.group(1))) {
        number(1, Integer.MAX_VALUE).check(pair.getKey(), pair.getValue(), req);
      }
    }
  }

  /**
   * The field facets of a request (their targets), which must count with a mincount of 1 at least.
   */
  static List<String> fieldFacets(String[] values) {
    List<String> fields = new ArrayList<>();
    if (values != null) {
      for (String value : values) {
        fields.add(target(value));
      }
    }
    return fields;
  }

  /**
   * Whether the service account may hand this parameter over as a user's ({@code client.<name>}).
   */
  static void handedOver(String name) {
    if (NOT_HANDED_OVER.contains(name) || REFINE_TERMS.matcher(name).matches()) {
      throw refused(
          "client." + name, "names a parameter that is Solr's or the service account's own");
    }
  }

  private static Rule rule(String name) {
    Rule rule = RULES.get(name);
    if (rule != null) {
      return rule;
    }
    if (REFINE_TERMS.matcher(name).matches()) {
      return text(
          100_000); // the terms a shard is asked to count for a facet: counted under the filter
    }
    Matcher perField = PER_FIELD.matcher(name);
    if (perField.matches()) {
      Rule option = RULES.get(perField.group(2));
      if (option != null && option != HIGHLIGHT_QUERY && !perField.group(2).equals("facet.query")) {
        field(name, perField.group(1));
        return perField.group(2).equals("facet.mincount") ? number(0, Integer.MAX_VALUE) : option;
      }
    }
    throw refused(name, "is not accepted from a client other than the service account");
  }

  /** The field after a facet parameter's local parameters. */
  private static String target(String value) {
    Matcher found = LOCAL.matcher(value);
    return found.matches() ? found.group(2) : value;
  }

  /**
   * {@code {!k=v …}field}: only the keys {@code allowed}, each with plain names ({@code terms} only
   * as {@code $<facet>__terms}, the parameter Solr's facet refinement names), then a field.
   */
  private static void facetTarget(String name, String value, Set<String> allowed) {
    Matcher found = LOCAL.matcher(value);
    String rest = value;
    if (found.matches()) {
      for (String pair : SPACES.split(found.group(1).strip())) {
        int eq = pair.indexOf('=');
        String key = eq < 0 ? pair : pair.substring(0, eq);
        String val = eq < 0 ? "" : pair.substring(eq + 1);
        boolean ok =
            allowed.contains(key)
                && (key.equals("terms")
                    ? val.startsWith("$") && REFINE_TERMS.matcher(val.substring(1)).matches()
                    : NAMES.matcher(val).matches());
        if (!ok) {
          throw refused(
              name,
              "accepts only the local parameters "
                  + String.join(", ", allowed)
                  + " with plain names");
        }
      }
      rest = found.group(2);
    }
    field(name, rest);
  }

  /** A query, judged as Solr will parse and run it ({@link QueryJudge}). */
  private static void query(
      String name, String value, String type, Set<String> localKeys, SolrQueryRequest req) {
    length(name, value, MAX_QUERY);
    QueryJudge.judge(name, value, type, localKeys, req);
  }

  private static void plainText(String name, String value, int max) {
    length(name, value, max);
    if (value.contains("{!") || value.contains("$") || CONTROL.matcher(value).find()) {
      throw refused(name, "must be plain text");
    }
  }

  private static void length(String name, String value, int max) {
    if (value.length() > max) {
      throw refused(name, "may hold at most " + max + " characters");
    }
  }

  /**
   * A plain field name, not an ACL field (in a query, {@link QueryJudge} also refuses internal
   * ones).
   */
  static void field(String name, String value) {
    if (!FIELD.matcher(value).matches()) {
      throw refused(name, "must name a field (" + value + " is not a plain field name)");
    }
    if (ACL_FIELD.matcher(value).find()) {
      throw refused(name, "may not name an access-control field");
    }
  }

  private static void sort(String name, String value, SolrQueryRequest req) {
    for (String clause : value.split(",")) {
      Matcher found = SORT.matcher(clause.strip());
      if (!found.matches()) {
        throw refused(name, "must be fields, each asc or desc (no functions)");
      }
      if (!found.group(1).equals("score")) {
        field(name, found.group(1));
        // a name that is no field would be read as a function
        if (req.getSchema().getFieldOrNull(found.group(1)) == null) {
          throw refused(name, "must name fields of the schema (not " + found.group(1) + ")");
        }
      }
    }
  }

  /**
   * {@code fl}: plain fields (optionally renamed {@code alias:field}), {@code score}, {@code *}.
   */
  private static void returnFields(String name, String value, SolrQueryRequest req) {
    for (String one : COMMAS_OR_SPACES.split(value)) {
      if (one.isEmpty() || one.equals("*") || one.equals("score")) {
        continue;
      }
      int colon = one.indexOf(':');
      if (colon >= 0) {
        field(name, one.substring(0, colon));
        one = one.substring(colon + 1);
        if (req.getSchema().getFieldOrNull(one) == null) {
          throw refused(name, "may rename only fields of the schema (not " + one + ")");
        }
      }
      field(name, one);
    }
  }

  private static Rule choice(String... allowed) {
    List<String> list = List.of(allowed);
    return (name, value, req) -> {
      if (!list.contains(value)) {
        throw refused(name, "must be one of " + String.join(", ", list));
      }
    };
  }

  private static Rule number(long low, long high) {
    return (name, value, req) -> {
      double number;
      try {
        number = Double.parseDouble(value.strip());
      } catch (NumberFormatException e) {
        throw refused(name, "must be a number");
      }
      if (number < low || number > high) {
        throw refused(name, "must be from " + low + " to " + high);
      }
    };
  }

  private static Rule pattern(Pattern pattern, String what) {
    return (name, value, req) -> {
      if (!pattern.matcher(value).matches()) {
        throw refused(name, what);
      }
    };
  }

  static SolrException refused(String name, String why) {
    return new SolrException(
        ErrorCode.BAD_REQUEST,
        "'"
            + name
            + "' "
            + why
            + " (this handler filters every search by the user's access; "
            + "see the product's docs/security.md)");
  }
}
