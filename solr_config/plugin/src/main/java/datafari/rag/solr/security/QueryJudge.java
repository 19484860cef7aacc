package datafari.rag.solr.security;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.DisjunctionMaxQuery;
import org.apache.lucene.search.DocValuesFieldExistsQuery;
import org.apache.lucene.search.FieldExistsQuery;
import org.apache.lucene.search.FuzzyQuery;
import org.apache.lucene.search.IndexOrDocValuesQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.MultiPhraseQuery;
import org.apache.lucene.search.NormsFieldExistsQuery;
import org.apache.lucene.search.PhraseQuery;
import org.apache.lucene.search.PointInSetQuery;
import org.apache.lucene.search.PointRangeQuery;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.RegexpQuery;
import org.apache.lucene.search.SynonymQuery;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TermRangeQuery;
import org.apache.lucene.search.WildcardQuery;
import org.apache.lucene.util.automaton.ByteRunAutomaton;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.params.CommonParams;
import org.apache.solr.common.params.ModifiableSolrParams;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.common.util.StrUtils;
import org.apache.solr.query.FilterQuery;
import org.apache.solr.query.SolrRangeQuery;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.schema.IndexSchema;
import org.apache.solr.schema.SchemaField;
import org.apache.solr.search.DisMaxQParserPlugin;
import org.apache.solr.search.ExtendedDismaxQParserPlugin;
import org.apache.solr.search.LuceneQParserPlugin;
import org.apache.solr.search.QParser;
import org.apache.solr.search.QParserPlugin;
import org.apache.solr.search.QueryParsing;
import org.apache.solr.search.SolrQueryParser;
import org.apache.solr.search.SyntaxError;

/**
 * Judges a client's query as Solr will run it, not as it was written. The value is parsed by the
 * parser Solr would choose for that parameter of that request ({@code defType} for {@code q},
 * {@code lucene} for {@code fq} and {@code facet.query}…), after Solr has expanded macros and
 * applied the handler's defaults, and with Solr's own escapes decoded by Solr's own grammar; then
 * the resulting Lucene {@link Query} is walked node by node. Only queries whose matches on a
 * document depend on that document alone pass: terms, phrases, synonyms, ranges, prefixes,
 * wildcards, regular expressions and "exists", combined by boolean, boost, disjunction and
 * constant-score nodes, on fields of the schema that are plainly searchable and not the ACL's.
 * Everything else — join, graph, function and frange queries, nested {@code _query_}, fuzzy
 * queries, any query class the walk does not know — is refused with a 400.
 *
 * <p>Nested parsers are switched off for the parse ({@code allowSubQueryParsing}), so a nested
 * query ({@code {!…}} inside the text, {@code _query_}, {@code _val_}) is never built, let alone
 * run, while judging: a parse that would have needed one is refused. Solr's real parse of an
 * accepted value then differs from the judged one in nothing, since it found nothing to nest.
 */
final class QueryJudge {
  /**
   * Admin-only parameters that add queries of their own to an edismax or dismax query: the
   * judgement is of the client's text, and a client may not send these (see {@link ClientParams}).
   */
  private static final Set<String> ADMIN_BOOSTS = Set.of("bq", "bf", "boost", "q.alt");

  private static final Set<String> MAGIC_FIELDS = Set.of("_query_", "_val_");

  /** Set in the request's context when {@link ParsedQueryComponent} will see Solr's main query. */
  static final String PARSED_LATER = QueryJudge.class.getName() + ".parsedLater";

  private QueryJudge() {}

  /**
   * Judges {@code value}, a query Solr will parse for parameter {@code name} with {@code
   * defaultType} (local parameters honoured as Solr honours them: only when that type is lucene),
   * accepting only the local parameters {@code localKeys}, each with plain names.
   */
  static void judge(
      String name, String value, String defaultType, Set<String> localKeys, SolrQueryRequest req) {
    String type = defaultType == null ? QParserPlugin.DEFAULT_QTYPE : defaultType;
    String text = value;
    SolrParams local = null;
    if (type.equals(QParserPlugin.DEFAULT_QTYPE)
        && value.startsWith(QueryParsing.LOCALPARAM_START)) {
      ModifiableSolrParams parsed = new ModifiableSolrParams();
      int end;
      try {
        end = QueryParsing.parseLocalParams(value, 0, parsed, req.getParams());
      } catch (SyntaxError e) {
        throw ClientParams.refused(
            name, "has local parameters Solr cannot read: " + e.getMessage());
      }
      localParams(name, parsed, localKeys);
      text = value.substring(end);
      local = parsed;
    }
    Query query = parse(name, text, type, local, req);
    if (query != null) {
      walk(name, query, req.getSchema());
    }
  }

  /**
   * Judges {@code q}, which Solr parses with {@code type}: left to {@link ParsedQueryComponent}
   * (which walks Solr's own parse) when the request runs it and the parser is edismax or dismax
   * with nothing of the administrator's added to the client's query; judged here otherwise.
   */
  static void judgeMain(String name, String value, String type, SolrQueryRequest req) {
    QParserPlugin plugin = type == null ? null : req.getCore().getQueryPlugin(type);
    boolean nestsNothing =
        plugin != null
            && (plugin.getClass() == ExtendedDismaxQParserPlugin.class
                || plugin.getClass() == DisMaxQParserPlugin.class);
    boolean adminAdds = false;
    for (String boost : ADMIN_BOOSTS) {
      adminAdds |= req.getParams().get(boost) != null;
    }
    if (nestsNothing && !adminAdds && Boolean.TRUE.equals(req.getContext().get(PARSED_LATER))) {
      userFieldsWithoutNesting(name, req.getParams());
      req.getContext().put(ParsedQueryComponent.LEFT_TO_JUDGE, name);
      return;
    }
    judge(name, value, type, Set.of(), req);
  }

  /** Judges a query Solr has parsed itself (the main query, in {@link ParsedQueryComponent}). */
  static void judgeParsed(String name, Query query, IndexSchema schema) {
    walk(name, query, schema);
  }

  /**
   * The local parameters Solr read (after its dereferencing): only {@code allowed}, plain names.
   */
  static void localParams(String name, SolrParams parsed, Set<String> allowed) {
    for (Iterator<String> keys = parsed.getParameterNamesIterator(); keys.hasNext(); ) {
      String key = keys.next();
      if (!allowed.contains(key)) {
        throw ClientParams.refused(
            name,
            "accepts only the local parameters "
                + (allowed.isEmpty() ? "(none)" : String.join(", ", allowed))
                + " with plain names, not '"
                + key
                + "' (another query parser, a value from elsewhere)");
      }
      for (String val : parsed.getParams(key)) {
        if (val == null || !ClientParams.NAMES.matcher(val).matches()) {
          throw ClientParams.refused(
              name, "accepts only plain names in its local parameter '" + key + "'");
        }
      }
    }
  }

  /** The query Solr's parser of {@code type} makes of {@code text}, nested parsers switched off. */
  private static Query parse(
      String name, String text, String type, SolrParams local, SolrQueryRequest req) {
    QParserPlugin plugin = req.getCore().getQueryPlugin(type);
    try {
      if (plugin != null && plugin.getClass() == LuceneQParserPlugin.class) {
        if (text.isEmpty()) {
          return null;
        }
        QParser context = plugin.createParser(text, local, req.getParams(), req);
        SolrQueryParser parser = new SolrQueryParser(context, context.getParam(CommonParams.DF));
        parser.setDefaultOperator(QueryParsing.parseOP(context.getParam(QueryParsing.OP)));
        parser.setSplitOnWhitespace(
            StrUtils.parseBool(
                context.getParam(QueryParsing.SPLIT_ON_WHITESPACE),
                SolrQueryParser.DEFAULT_SPLIT_ON_WHITESPACE));
        parser.setAllowSubQueryParsing(false);
        return parser.parse(text);
      }
      if (plugin != null
          && (plugin.getClass() == ExtendedDismaxQParserPlugin.class
              || plugin.getClass() == DisMaxQParserPlugin.class)) {
        userFieldsWithoutNesting(name, req.getParams());
        SolrParams clientOnly = new Without(req.getParams(), ADMIN_BOOSTS);
        return plugin.createParser(text, local, clientOnly, req).getQuery();
      }
    } catch (SyntaxError e) {
      if (String.valueOf(e.getMessage()).contains("subquery is disabled")) {
        throw ClientParams.refused(name, "may not hold a nested query ({!…} inside a query)");
      }
      throw ClientParams.refused(name, "is not a query Solr can parse: " + e.getMessage());
    } catch (SolrException e) {
      String message = String.valueOf(e.getMessage());
      for (String magic : MAGIC_FIELDS) {
        if (message.endsWith("undefined field " + magic)) {
          throw ClientParams.refused(
              name, "may not hold nested queries or functions (" + magic + ")");
        }
      }
      throw ClientParams.refused(name, "is not a query Solr can run: " + message);
    } catch (RuntimeException e) {
      throw ClientParams.refused(
          name, "is not a query Solr can parse (" + e.getClass().getSimpleName() + ")");
    }
    throw ClientParams.refused(
        name,
        "is parsed by '" + type + "', which is not lucene, edismax or dismax: it cannot be judged");
  }

  /** edismax nests {@code _query_} only when {@code uf} names it; the door never lets it. */
  private static void userFieldsWithoutNesting(String name, SolrParams params) {
    String[] userFields = params.getParams("uf");
    if (userFields == null) {
      return;
    }
    for (String value : userFields) {
      for (String one : value.strip().split("\\s+")) {
        int boost = one.indexOf('^');
        if ((boost < 0 ? one : one.substring(0, boost)).equals("_query_")) {
          throw ClientParams.refused(
              name, "cannot be judged: this handler's uf lets queries nest (_query_)");
        }
      }
    }
  }

  /** Every node of {@code query}: known structure, known leaves, fields a client may search. */
  private static void walk(String name, Query query, IndexSchema schema) {
    if (query instanceof BooleanQuery) {
      for (BooleanClause clause : ((BooleanQuery) query).clauses()) {
        walk(name, clause.getQuery(), schema);
      }
    } else if (query instanceof BoostQuery) {
      walk(name, ((BoostQuery) query).getQuery(), schema);
    } else if (query instanceof ConstantScoreQuery) {
      walk(name, ((ConstantScoreQuery) query).getQuery(), schema);
    } else if (query instanceof DisjunctionMaxQuery) {
      for (Query disjunct : ((DisjunctionMaxQuery) query).getDisjuncts()) {
        walk(name, disjunct, schema);
      }
    } else if (query.getClass() == FilterQuery.class) {
      walk(name, ((FilterQuery) query).getQuery(), schema);
    } else if (query.getClass() == IndexOrDocValuesQuery.class) {
      // the same range, run on the index or on doc values as Lucene finds cheaper
      IndexOrDocValuesQuery either = (IndexOrDocValuesQuery) query;
      walk(name, either.getIndexQuery(), schema);
      if (!fieldsOf(name, either.getIndexQuery())
          .containsAll(fieldsOf(name, either.getRandomAccessQuery()))) {
        throw ClientParams.refused(
            name, "holds a query the door does not know (" + kind(query) + ")");
      }
    } else if (query instanceof FuzzyQuery) {
      throw ClientParams.refused(
          name,
          "may not hold a fuzzy query (~): it keeps the 50 terms of the whole index nearest the word and"
              + " scores them by their frequency there, documents the user may not read included");
    } else if (query.getClass() == SolrRangeQuery.class) {
      // Solr's range over a text field's terms: it reports no field to a visitor
      field(name, ((SolrRangeQuery) query).getField(), schema);
    } else if (query.getClass() == MatchAllDocsQuery.class
        || query.getClass() == MatchNoDocsQuery.class) {
      return;
    } else if (isLeaf(query)) {
      Set<String> fields = fieldsOf(name, query);
      if (fields.isEmpty()) {
        throw ClientParams.refused(
            name, "holds a query the door cannot read the field of (" + kind(query) + ")");
      }
      for (String field : fields) {
        field(name, field, schema);
      }
    } else {
      throw ClientParams.refused(
          name,
          "may not hold a "
              + kind(query)
              + " (only terms, phrases, ranges, prefixes, wildcards and their combinations are"
              + " accepted: nothing that reads documents beyond those that match)");
    }
  }

  /** Leaves whose matches on a document depend on that document's own terms or values alone. */
  private static boolean isLeaf(Query query) {
    Class<?> kind = query.getClass();
    return kind == TermQuery.class
        || kind == PhraseQuery.class
        || kind == MultiPhraseQuery.class
        || kind == SynonymQuery.class
        || kind == TermInSetQuery.class
        || kind == TermRangeQuery.class
        || kind == PrefixQuery.class
        || kind == WildcardQuery.class
        || kind == RegexpQuery.class
        || kind == FieldExistsQuery.class
        || kind == DocValuesFieldExistsQuery.class
        || kind == NormsFieldExistsQuery.class
        // Lucene's points make anonymous subclasses that only change how a value is printed
        || query instanceof PointRangeQuery
        || query instanceof PointInSetQuery;
  }

  /** The fields a leaf reads, as it reports them to a visitor. */
  private static Set<String> fieldsOf(String name, Query leaf) {
    Set<String> fields = new LinkedHashSet<>();
    leaf.visit(
        new QueryVisitor() {
          @Override
          public boolean acceptField(String field) {
            fields.add(field);
            return true;
          }

          @Override
          public void consumeTerms(Query query, Term... terms) {
            for (Term term : terms) {
              fields.add(term.field());
            }
          }

          @Override
          public void consumeTermsMatching(
              Query query, String field, Supplier<ByteRunAutomaton> automaton) {
            fields.add(field);
          }

          @Override
          public QueryVisitor getSubVisitor(BooleanClause.Occur occur, Query parent) {
            if (parent != leaf) {
              throw ClientParams.refused(
                  name, "holds a query the door does not know (" + kind(parent) + ")");
            }
            return this;
          }
        });
    return fields;
  }

  /**
   * A field a client may search: in the schema, indexed or with doc values, not internal, not the
   * ACL's.
   */
  static void field(String name, String field, IndexSchema schema) {
    if (MAGIC_FIELDS.contains(field)) {
      throw ClientParams.refused(name, "may not hold nested queries or functions (" + field + ")");
    }
    if (ClientParams.ACL_FIELD.matcher(field).find()) {
      throw ClientParams.refused(name, "may not name an access-control field");
    }
    SchemaField known = schema.getFieldOrNull(field);
    if (field.startsWith("_") || known == null || !(known.indexed() || known.hasDocValues())) {
      throw ClientParams.refused(name, "may only search fields of the schema (not " + field + ")");
    }
  }

  private static String kind(Query query) {
    String simple = query.getClass().getSimpleName();
    return (simple.isEmpty() ? query.getClass().getName() : simple) + " query";
  }

  /**
   * {@code params} without some names: what the parser reads of the request, less the admin's
   * boosts.
   */
  private static final class Without extends SolrParams {
    private final SolrParams params;
    private final Set<String> hidden;

    Without(SolrParams params, Set<String> hidden) {
      this.params = params;
      this.hidden = hidden;
    }

    @Override
    public String get(String param) {
      return hidden.contains(param) ? null : params.get(param);
    }

    @Override
    public String[] getParams(String param) {
      return hidden.contains(param) ? null : params.getParams(param);
    }

    @Override
    public Iterator<String> getParameterNamesIterator() {
      Iterator<String> all = params.getParameterNamesIterator();
      return new Iterator<>() {
        private String next = advance();

        private String advance() {
          while (all.hasNext()) {
            String candidate = all.next();
            if (!hidden.contains(candidate)) {
              return candidate;
            }
          }
          return null;
        }

        @Override
        public boolean hasNext() {
          return next != null;
        }

        @Override
        public String next() {
          String current = next;
          next = advance();
          return current;
        }
      };
    }
  }
}
