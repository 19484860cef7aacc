package datafari.rag.solr.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.SolrException.ErrorCode;

/**
 * The access tokens of a user: from a ManifoldCF authority service ({@code GET
 * {base}/UserACLs?username=…}), or from a local mapping ({@code {"users": {"alice": ["hr"]}}}) when
 * no service is configured. Fail closed: a reply that cannot be trusted (an unreachable authority,
 * an unknown line, no status line, an error status, a redirect, a timeout) refuses the search
 * instead of guessing. Good answers are cached, bounded in size and age.
 */
final class UserTokens {
  private static final List<String> STATUS_LINES =
      List.of("AUTHORIZED:", "UNAUTHORIZED:", "USERNOTFOUND:", "UNREACHABLEAUTHORITY:");
  private static final int MAX_REPLY = 1 << 20;

  private final String authority;
  private final Map<String, List<String>> users;
  private final Map<String, List<String>> groups;
  private final Duration timeout;
  private final HttpClient http;
  private final Cache<String, Set<String>> cache;

  UserTokens(
      String authority,
      Map<String, List<String>> users,
      Map<String, List<String>> groups,
      Duration timeout,
      Duration cacheAge,
      long cacheSize) {
    this.authority = authority == null || authority.isBlank() ? null : authority.strip();
    this.users = users;
    this.groups = groups;
    this.timeout = timeout;
    this.http =
        this.authority == null
            ? null
            : HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    this.cache = Caffeine.newBuilder().maximumSize(cacheSize).expireAfterWrite(cacheAge).build();
  }

  /**
   * The token only this user holds (what is private to them, their uploads): the sidecar gives
   * every identity the same one (datafari_rag/security/authority.py).
   */
  static final String OWN_TOKEN = "datafari-rag-user:";

  /**
   * The user's tokens (the authority's, else the mapping's), plus those of their groups and their
   * own.
   */
  Set<String> of(String user, List<String> userGroups) {
    Set<String> tokens = new HashSet<>();
    tokens.add(OWN_TOKEN + user);
    if (authority == null) {
      tokens.addAll(users.getOrDefault(user, List.of()));
    } else {
      Set<String> cached = cache.getIfPresent(user);
      if (cached == null) {
        cached = parse(fetch(user));
        cache.put(user, cached);
      }
      tokens.addAll(cached);
    }
    for (String group : userGroups) {
      tokens.addAll(groups.getOrDefault(group, List.of()));
    }
    return tokens;
  }

  private String fetch(String user) {
    String base = authority.endsWith("/") ? authority : authority + "/";
    URI uri =
        URI.create(base + "UserACLs?username=" + URLEncoder.encode(user, StandardCharsets.UTF_8));
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
    HttpResponse<byte[]> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw refused("could not be reached (" + e + ")");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw refused("lookup was interrupted");
    }
    if (response.statusCode() != 200) {
      throw refused("answered HTTP " + response.statusCode());
    }
    if (response.body().length > MAX_REPLY) {
      throw refused("answered more than " + MAX_REPLY + " bytes");
    }
    return new String(response.body(), StandardCharsets.ISO_8859_1);
  }

  /** The tokens of a UserACLs reply: the text after {@code TOKEN:}, as ManifoldCF's plugin. */
  static Set<String> parse(String reply) {
    Set<String> tokens = new HashSet<>();
    int statuses = 0;
    for (String line : reply.split("\r?\n")) {
      if (line.isBlank()) {
        continue;
      }
      if (line.startsWith("TOKEN:")) {
        String token = line.substring("TOKEN:".length());
        if (token.isEmpty()) {
          throw refused("answered an empty token");
        }
        tokens.add(token);
      } else if (line.startsWith("UNREACHABLEAUTHORITY:")) {
        throw refused("could not reach " + line.substring(line.indexOf(':') + 1));
      } else if (STATUS_LINES.stream().anyMatch(line::startsWith)) {
        statuses++;
      } else if (!line.startsWith("ID:")) {
        throw refused("answered a line ManifoldCF does not define");
      }
    }
    if (statuses == 0) {
      throw refused("answered no authority status");
    }
    return Collections.unmodifiableSet(tokens);
  }

  private static SolrException refused(String why) {
    return new SolrException(
        ErrorCode.SERVICE_UNAVAILABLE, "The authority service " + why + "; nothing is searched");
  }
}
