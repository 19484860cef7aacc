package datafari.rag.solr.security;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;
import org.apache.solr.common.params.SolrParams;

/**
 * The parameters a client other than the service account may send to a secured search handler,
 * each with the forms it may take. Everything that could evaluate a query outside the user's
 * filtered documents — other query parsers ({@code join}, {@code graph}, {@code frange}, {@code
 * _query_}, functions), transformers ({@code [subquery]}, {@code [child]}, {@code [explain]}),
 * {@code expand}, {@code terms}, {@code debug}, {@code json.facet}, MoreLikeThis, spellcheck,
 * stats, grouping, {@code shards} — is simply not on the list, and the six ACL fields may not be
 * named anywhere. The grammar is the one the sidecar accepts from DatafariUI: an edismax or
 * lucene {@code q}, {@code fq} with {@code {!tag}}, facets with {@code {!ex}}/{@code {!key}} and a
 * {@code mincount} of at least 1, highlighting and sorting on plain fields, bounded paging.
 *
 * <p>Solr's own distributed search forwards a request to each shard as the same user, with a few
 * parameters of its own (listed in {@link #RULES} too) and the handler's configured values, which
 * are accepted as they are.
 */
final class ClientParams {
  static final Pattern ACL_FIELD = Pattern.compile("(allow|deny)_token_", Pattern.CASE_INSENSITIVE);
  private static final Pattern FIELD = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_\\-.]{1,100}");
  private static final Pattern LOCAL = Pattern.compile("^\\{!([^{}]*)\\}(.*)$", Pattern.DOTALL);
  private static final Pattern PER_FIELD = Pattern.compile("^f\\.([^.]+)\\.((?:facet|hl)\\..+)$");
  private static final Pattern REFINE_TERMS = Pattern.compile("^[A-Za-z0-9_\\-.]{1,100}__terms$");
  private static final Pattern SORT = Pattern.compile("^([A-Za-z_][A-Za-z0-9_]*)\\s+(asc|desc)$");
  private static final Pattern DATE_MATH = Pattern.compile("^[0-9A-Za-z:.+\\-/*]{1,100}$");
  private static final Pattern FIELD_BOOST = Pattern.compile("^([A-Za-z_][A-Za-z0-9_]*)(\\^[0-9.]+)?$");
  private static final Pattern MIN_MATCH = Pattern.compile("^[0-9%<>\\- ]{1,50}$");
  private static final Pattern QUERY_VECTOR = Pattern.compile("^[0-9a-f]{16}:[0-9eE.,+\\-]{1,65536}$");
  private static final int MAX_QUERY = 10_000;
  private static final int MAX_REPEATS = 100;

  /** One rule: checks a value of the named parameter, or throws a 400 that says why. */
  private interface Rule extends BiConsumer<String, String> {}

  private static final Rule ANY = (name, value) -> {};
  private static final Rule BOOL = choice("true", "false", "on", "off");
  private static final Rule QUERY = ClientParams::query;
  private static final Rule FIELD_RULE = (name, value) -> field(name, value);
  private static final Rule FIELDS =
      (name, value) -> {
        for (String one : value.split("[,\\s]+")) {
          if (!one.isEmpty()) {
            field(name, one);
          }
        }
      };
  private static final Rule BOOSTED_FIELDS =
      (name, value) -> {
        for (String one : value.strip().split("\\s+")) {
          Matcher found = FIELD_BOOST.matcher(one);
          if (!one.isEmpty() && !found.matches()) {
            throw refused(name, "must list fields, each with an optional ^boost");
          }
          if (!one.isEmpty()) {
            field(name, found.group(1));
          }
        }
      };

  /** The parameter names a client may send, each with its rule; {@code f.<field>.<option>}
   * takes the option's rule with a plain, non-ACL field. */
  static final Map<String, Rule> RULES =
      Map.ofEntries(
          // the query
          Map.entry("q", QUERY),
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
          Map.entry("fq", (name, value) -> tagged(name, value, Set.of("tag"), false)),
          // the text-to-vector handler (its q dereferences these)
          Map.entry("queryrag", (name, value) -> length(name, value, MAX_QUERY)),
          Map.entry("topK", number(1, 1000)),
          Map.entry("efSearch", number(1, 1000)),
          Map.entry("model", pattern(NAME, "must name a model")),
          Map.entry("vectorField", FIELD_RULE),
          // the results
          Map.entry("start", number(0, 10_000)),
          Map.entry("rows", number(0, 10_000)),
          Map.entry("sort", ClientParams::sort),
          Map.entry("fl", ClientParams::returnFields),
          Map.entry("cursorMark", ANY),
          Map.entry("timeAllowed", number(-1, 600_000)),
          // facets counted over the user's documents only, values of readable documents only
          Map.entry("facet", BOOL),
          Map.entry("facet.field", (name, value) -> tagged(name, value, Set.of("ex", "key", "terms"), true)),
          Map.entry("facet.range", (name, value) -> tagged(name, value, Set.of("ex", "key"), true)),
          Map.entry("facet.query", (name, value) -> tagged(name, value, Set.of("ex", "key"), false)),
          Map.entry("facet.mincount", number(1, Integer.MAX_VALUE)),
          Map.entry("facet.limit", number(-1, 10_000)),
          Map.entry("facet.offset", number(0, 1_000_000)),
          Map.entry("facet.sort", choice("count", "index")),
          Map.entry("facet.missing", BOOL),
          Map.entry("facet.method", choice("enum", "fc", "fcs")),
          Map.entry("facet.prefix", (name, value) -> plainText(name, value, 200)),
          Map.entry("facet.overrequest.ratio", number(0, 100)),
          Map.entry("facet.overrequest.count", number(0, 10_000)),
          Map.entry("facet.range.start", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.end", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.gap", pattern(DATE_MATH, "must be a date, a number or date math")),
          Map.entry("facet.range.hardened", BOOL),
          Map.entry("facet.range.include", choice("lower", "upper", "edge", "outer", "all")),
          Map.entry("facet.range.other", choice("before", "after", "between", "none", "all")),
          Map.entry("facet.range.method", choice("filter", "dv")),
          // highlighting of the returned documents, on plain fields
          Map.entry("hl", BOOL),
          Map.entry("hl.fl", FIELDS),
          Map.entry("hl.q", QUERY),
          Map.entry("hl.snippets", number(1, 100)),
          Map.entry("hl.fragsize", number(0, 100_000)),
          Map.entry("hl.method", choice("unified", "original", "fastVector")),
          Map.entry("hl.encoder", choice("", "html")),
          Map.entry("hl.tag.pre", (name, value) -> plainText(name, value, 100)),
          Map.entry("hl.tag.post", (name, value) -> plainText(name, value, 100)),
          Map.entry("hl.simple.pre", (name, value) -> plainText(name, value, 100)),
          Map.entry("hl.simple.post", (name, value) -> plainText(name, value, 100)),
          Map.entry("hl.requireFieldMatch", BOOL),
          Map.entry("hl.usePhraseHighlighter", BOOL),
          Map.entry("hl.highlightMultiTerm", BOOL),
          Map.entry("hl.defaultSummary", BOOL),
          Map.entry("hl.maxAnalyzedChars", number(0, 10_000_000)),
          Map.entry("hl.bs.type", choice("SEPARATOR", "SENTENCE", "WORD", "CHARACTER", "LINE", "WHOLE")),
          // the response's form
          Map.entry("wt", choice("json", "xml", "javabin")),
          Map.entry("version", ANY),
          Map.entry("indent", BOOL),
          Map.entry("json.nl", choice("flat", "map", "arrarr", "arrmap", "arrntv")),
          Map.entry("omitHeader", BOOL),
          Map.entry("echoParams", choice("none", "explicit", "all")),
          Map.entry("_", ANY),
          // the user, which only the service account may name: ignored for anyone else
          Map.entry(ManifoldCFSecurityQParserPlugin.USER_PARAM, ANY),
          Map.entry(ManifoldCFSecurityQParserPlugin.GROUP_PARAM, ANY),
          // what Solr's distributed search adds to a shard's request (as the same user)
          Map.entry("distrib", BOOL),
          Map.entry("isShard", BOOL),
          Map.entry("shard.url", ANY),
          Map.entry("shards.purpose", number(0, Integer.MAX_VALUE)),
          Map.entry("shards.tolerant", BOOL),
          Map.entry("fsv", BOOL),
          Map.entry("NOW", number(0, Long.MAX_VALUE)),
          Map.entry("TZ", pattern(Pattern.compile("^[A-Za-z0-9_/+\\-:]{1,50}$"), "must be a time zone")),
          Map.entry("rid", ANY),
          Map.entry("_stateVer_", ANY),
          Map.entry("_route_", ANY),
          Map.entry("distrib.singlePass", BOOL),
          // the query's vector, made by the node the client called (a text's key, then numbers)
          Map.entry("queryVector", pattern(QUERY_VECTOR, "must be a query text's key and its vector")),
          // the ids a shard returns the fields of: only those the user may read (the guard checks)
          Map.entry("ids", ANY));

  private ClientParams() {}

  /**
   * Checks every parameter the client sent; a value equal to one the handler itself configures
   * (a default, an append, an invariant — forwarded by Solr to each shard) is accepted as it is,
   * and so is {@code qt} naming the handler itself (Solr sends it to the shards of a handler
   * other than /select).
   */
  static void check(SolrParams sent, Set<Map.Entry<String, String>> configured, String path) {
    Set<String> fieldFacets = new LinkedHashSet<>();
    Set<String> rangeFacets = new LinkedHashSet<>();
    for (Iterator<String> names = sent.getParameterNamesIterator(); names.hasNext(); ) {
      String name = names.next();
      String[] values = sent.getParams(name);
      if (values == null) {
        continue;
      }
      if (values.length > MAX_REPEATS) {
        throw refused(name, "may be given at most " + MAX_REPEATS + " times");
      }
      for (String value : values) {
        if (configured.contains(Map.entry(name, value))
            || (name.equals("qt") && value.equals(path))) {
          continue;
        }
        rule(name).accept(name, value);
        if (name.equals("facet.field")) {
          fieldFacets.add(target(value));
        } else if (name.equals("facet.range")) {
          rangeFacets.add(target(value));
        }
      }
    }
    for (String field : fieldFacets) {
      if (rangeFacets.contains(field)) {
        throw refused("facet.field", "and facet.range may not name the same field (" + field + ")");
      }
    }
    // a field facet with mincount 0 would list values of documents the user may not read (Solr
    // forwards 0 for range facets to shards: range buckets hold no value of a document)
    for (Iterator<String> names = sent.getParameterNamesIterator(); names.hasNext(); ) {
      String name = names.next();
      Matcher perField = PER_FIELD.matcher(name);
      if (perField.matches()
          && perField.group(2).equals("facet.mincount")
          && !rangeFacets.contains(perField.group(1))) {
        number(1, Integer.MAX_VALUE).accept(name, sent.get(name));
      }
    }
  }

  /** The field facets of a request (their targets), which must count with a mincount of 1 at least. */
  static List<String> fieldFacets(SolrParams params) {
    String[] values = params.getParams("facet.field");
    List<String> fields = new ArrayList<>();
    if (values != null) {
      for (String value : values) {
        fields.add(target(value));
      }
    }
    return fields;
  }

  private static Rule rule(String name) {
    Rule rule = RULES.get(name);
    if (rule != null) {
      return rule;
    }
    if (REFINE_TERMS.matcher(name).matches()) {
      return ANY; // the terms a shard is asked to count for a facet: any value counts under the filter
    }
    Matcher perField = PER_FIELD.matcher(name);
    if (perField.matches()) {
      Rule option = RULES.get(perField.group(2));
      if (option != null && option != QUERY) {
        field(name, perField.group(1));
        return perField.group(2).equals("facet.mincount") ? number(0, Integer.MAX_VALUE) : option;
      }
    }
    throw refused(name, "is not accepted from a client other than the service account");
  }

  /** The field (or query) after a parameter's local parameters. */
  private static String target(String value) {
    Matcher found = LOCAL.matcher(value);
    return found.matches() ? found.group(2) : value;
  }

  /**
   * {@code {!k=v …}rest}: only the keys {@code allowed}, each with a plain name ({@code terms}
   * only as {@code $<facet>__terms}, the parameter Solr's facet refinement names); then a field
   * when {@code field}, else a query.
   */
  private static void tagged(String name, String value, Set<String> allowed, boolean field) {
    Matcher found = LOCAL.matcher(value);
    String rest = value;
    if (found.matches()) {
      for (String pair : found.group(1).strip().split("\\s+")) {
        int eq = pair.indexOf('=');
        String key = eq < 0 ? pair : pair.substring(0, eq);
        String val = eq < 0 ? "" : pair.substring(eq + 1);
        boolean ok =
            allowed.contains(key)
                && (key.equals("terms")
                    ? val.startsWith("$") && REFINE_TERMS.matcher(val.substring(1)).matches()
                    : !val.isEmpty() && List.of(val.split(",")).stream().allMatch(v -> NAME.matcher(v).matches()));
        if (!ok) {
          throw refused(name, "accepts only the local parameters " + String.join(", ", allowed) + " with plain names");
        }
      }
      rest = found.group(2);
    }
    if (field) {
      field(name, rest);
    } else {
      query(name, rest);
    }
  }

  /** A query in the standard syntax: no local parameters, nested queries or functions, no ACL field. */
  static void query(String name, String value) {
    length(name, value, MAX_QUERY);
    String plain = value.replace("\\", "").toLowerCase(Locale.ROOT);
    if (plain.contains("{!") || plain.contains("_query_") || plain.contains("_val_")) {
      throw refused(name, "may not hold local parameters, nested queries or functions");
    }
    if (ACL_FIELD.matcher(plain).find()) {
      throw refused(name, "may not name an access-control field");
    }
  }

  private static void plainText(String name, String value, int max) {
    length(name, value, max);
    if (value.contains("{!") || value.contains("$")) {
      throw refused(name, "must be plain text");
    }
  }

  private static void length(String name, String value, int max) {
    if (value.length() > max) {
      throw refused(name, "may hold at most " + max + " characters");
    }
  }

  static void field(String name, String value) {
    if (!FIELD.matcher(value).matches()) {
      throw refused(name, "must name a field (" + value + " is not a plain field name)");
    }
    if (ACL_FIELD.matcher(value).find()) {
      throw refused(name, "may not name an access-control field");
    }
  }

  private static void sort(String name, String value) {
    for (String clause : value.split(",")) {
      Matcher found = SORT.matcher(clause.strip());
      if (!found.matches()) {
        throw refused(name, "must be fields, each asc or desc (no functions)");
      }
      if (!found.group(1).equals("score")) {
        field(name, found.group(1));
      }
    }
  }

  /** {@code fl}: plain fields (optionally renamed {@code alias:field}), {@code score}, {@code *}. */
  private static void returnFields(String name, String value) {
    for (String one : value.split("[,\\s]+")) {
      if (one.isEmpty() || one.equals("*") || one.equals("score")) {
        continue;
      }
      int colon = one.indexOf(':');
      if (colon >= 0) {
        field(name, one.substring(0, colon));
        one = one.substring(colon + 1);
      }
      field(name, one);
    }
  }

  private static Rule choice(String... allowed) {
    List<String> list = List.of(allowed);
    return (name, value) -> {
      if (!list.contains(value)) {
        throw refused(name, "must be one of " + String.join(", ", list));
      }
    };
  }

  private static Rule number(long low, long high) {
    return (name, value) -> {
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
    return (name, value) -> {
      if (!pattern.matcher(value).matches()) {
        throw refused(name, what);
      }
    };
  }

  static SolrException refused(String name, String why) {
    return new SolrException(
        ErrorCode.BAD_REQUEST,
        "'" + name + "' " + why + " (this handler filters every search by the user's access; "
            + "see the product's docs/security.md)");
  }
}
