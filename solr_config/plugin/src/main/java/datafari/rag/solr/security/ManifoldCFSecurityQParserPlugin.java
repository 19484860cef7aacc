package datafari.rag.solr.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.io.InputStream;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.ResourceLoader;
import org.apache.lucene.util.ResourceLoaderAware;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.common.util.NamedList;
import org.apache.solr.common.util.Utils;
import org.apache.solr.request.SolrQueryRequest;
import org.apache.solr.search.QParser;
import org.apache.solr.search.QParserPlugin;

/**
 * {@code {!manifoldCFSecurity}}: ManifoldCF's document-level security as a filter Solr applies
 * itself, compatible with ManifoldCF's own query parser. Secured handlers append it as an {@code
 * fq}, so no client can remove it. A user holding tokens T may read a document when, at each level
 * L (share, parent, document):
 *
 * <pre>
 * ((allow_L = __nosecurity__ AND deny_L = __nosecurity__) OR allow_L ∩ T ≠ ∅) AND deny_L ∩ T = ∅
 * </pre>
 *
 * <p>Who the user is: a request authenticated to Solr as one of {@code trustedPrincipals} (the
 * sidecar's service account) names the user in {@code AuthenticatedUserName}; any other
 * authenticated request is filtered as its own principal; an unauthenticated one as anonymous
 * (public documents only) — unless Solr has no authentication at all and {@code
 * trustWithoutAuthentication} is set (a Solr only the sidecar can reach, like the local runtime).
 * Tokens come from the authority service, else from the configset's mapping file.
 */
public class ManifoldCFSecurityQParserPlugin extends QParserPlugin implements ResourceLoaderAware {
  public static final String NAME = "manifoldCFSecurity";
  public static final String USER_PARAM = "AuthenticatedUserName";

  /** Repeatable: the user's groups, from the sidecar's identity (a JWT claim, a header). */
  public static final String GROUP_PARAM = "AuthenticatedUserGroup";

  static final String NO_SECURITY = "__nosecurity__";
  static final List<String> LEVELS = List.of("share", "parent", "document");

  private Callers callers = new Callers(Set.of(), false);
  private boolean groupsAsTokens;
  private String authority;
  private String mappingFile;
  private Duration timeout;
  private Duration cacheAge;
  private long cacheSize;
  private volatile UserTokens tokens;

  /**
   * The filter of each set of tokens, built once: Solr's filter cache finds it by equality, and
   * building it again for every request (the term sets' sorted encodings) was a measurable share of
   * a search. Keyed by the tokens themselves, so a user's new tokens make a new filter at once.
   */
  private volatile Cache<Set<String>, Query> filters;

  @Override
  public void init(NamedList<?> args) {
    SolrParams params = args.toSolrParams();
    callers = Callers.of(params);
    groupsAsTokens = params.getBool("groupsAsTokens", false);
    authority = params.get("authorityServiceBaseURL", "");
    mappingFile = params.get("mappingFile", "acl-mapping.json");
    timeout = Duration.ofMillis(params.getLong("timeoutMs", 5000));
    cacheAge = Duration.ofSeconds(params.getLong("cacheSeconds", 60));
    cacheSize = params.getLong("cacheSize", 10000);
  }

  @Override
  public void inform(ResourceLoader loader) {
    tokens =
        new UserTokens(
            authority,
            readMapping(loader, "users"),
            readMapping(loader, "groups"),
            timeout,
            cacheAge,
            cacheSize);
    filters = Caffeine.newBuilder().maximumSize(cacheSize).build();
  }

  /** One section of the mapping file: users or groups to tokens (absent: empty). */
  @SuppressWarnings("unchecked")
  private Map<String, List<String>> readMapping(ResourceLoader loader, String name) {
    try (InputStream in = loader.openResource(mappingFile)) {
      Object data = Utils.fromJSON(in);
      Map<String, List<String>> users = new HashMap<>();
      Object section = data instanceof Map ? ((Map<String, Object>) data).get(name) : null;
      if (section instanceof Map) {
        for (Map.Entry<String, Object> entry : ((Map<String, Object>) section).entrySet()) {
          List<String> list = new ArrayList<>();
          if (entry.getValue() instanceof List) {
            for (Object token : (List<Object>) entry.getValue()) {
              if (token instanceof String) {
                list.add((String) token);
              }
            }
          }
          users.put(entry.getKey(), list);
        }
      }
      return users;
    } catch (IOException | RuntimeException e) {
      // No mapping: every user holds no token and sees public documents only (fail closed).
      return Collections.emptyMap();
    }
  }

  @Override
  public QParser createParser(
      String qstr, SolrParams localParams, SolrParams params, SolrQueryRequest req) {
    return new QParser(qstr, localParams, params, req) {
      @Override
      public Query parse() {
        String user = user(req, params);
        if (user == null) {
          return filters.get(Collections.emptySet(), ManifoldCFSecurityQParserPlugin::filter);
        }
        List<String> groups = callers.trusts(req) ? groups(params) : List.of();
        return filters.get(held(user, groups), ManifoldCFSecurityQParserPlugin::filter);
      }
    };
  }

  private Set<String> held(String user, List<String> groups) {
    Set<String> held = new TreeSet<>(tokens.of(user, groups));
    if (groupsAsTokens) {
      held.addAll(groups);
    }
    return held;
  }

  /** The user the request speaks for, or null for anonymous. */
  String user(SolrQueryRequest req, SolrParams params) {
    Principal principal = req.getUserPrincipal();
    if (callers.trusts(req)) {
      String named = params == null ? null : params.get(USER_PARAM);
      return named == null || named.isBlank() ? null : named;
    }
    return principal == null ? null : principal.getName();
  }

  private static List<String> groups(SolrParams params) {
    String[] values = params == null ? null : params.getParams(GROUP_PARAM);
    return values == null ? List.of() : Arrays.asList(values);
  }

  static Query filter(Set<String> userTokens) {
    List<BytesRef> terms = new ArrayList<>();
    for (String token : new TreeSet<>(userTokens)) {
      if (!token.isEmpty() && !token.equals(NO_SECURITY)) {
        terms.add(new BytesRef(token));
      }
    }
    BooleanQuery.Builder all = new BooleanQuery.Builder();
    for (String level : LEVELS) {
      String allow = "allow_token_" + level;
      String deny = "deny_token_" + level;
      Query open =
          new BooleanQuery.Builder()
              .add(new TermQuery(new Term(allow, NO_SECURITY)), Occur.FILTER)
              .add(new TermQuery(new Term(deny, NO_SECURITY)), Occur.FILTER)
              .build();
      BooleanQuery.Builder clause = new BooleanQuery.Builder();
      if (terms.isEmpty()) {
        clause.add(open, Occur.FILTER);
      } else {
        clause.add(
            new BooleanQuery.Builder()
                .add(open, Occur.SHOULD)
                .add(new TermInSetQuery(allow, terms), Occur.SHOULD)
                .setMinimumNumberShouldMatch(1)
                .build(),
            Occur.FILTER);
        clause.add(new TermInSetQuery(deny, terms), Occur.MUST_NOT);
      }
      all.add(clause.build(), Occur.FILTER);
    }
    return all.build();
  }
}
