package datafari.rag.solr.security;

import java.security.Principal;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.solr.common.params.SolrParams;
import org.apache.solr.request.SolrQueryRequest;

/**
 * Who may speak for another user: the service account (a request authenticated as one of {@code
 * trustedPrincipals}), or any request of a Solr that has no authentication at all when {@code
 * trustWithoutAuthentication} is set (a development Solr only the sidecar can reach). The security
 * filter and the parameter guard read the same two settings, so they always agree on who is
 * trusted.
 */
final class Callers {
  private final Set<String> trusted;
  private final boolean trustWithoutAuthentication;

  Callers(Set<String> trusted, boolean trustWithoutAuthentication) {
    this.trusted = Set.copyOf(trusted);
    this.trustWithoutAuthentication = trustWithoutAuthentication;
  }

  /**
   * From a plugin's configuration: {@code trustedPrincipals} (comma-separated) and {@code
   * trustWithoutAuthentication}.
   */
  static Callers of(SolrParams params) {
    Set<String> names =
        Arrays.stream(params.get("trustedPrincipals", "").split(","))
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .collect(Collectors.toUnmodifiableSet());
    return new Callers(names, params.getBool("trustWithoutAuthentication", false));
  }

  /** Whether the request comes from the service account (or an open development Solr). */
  boolean trusts(SolrQueryRequest req) {
    Principal principal = req.getUserPrincipal();
    if (principal != null && principal.getName() != null) {
      return trusted.contains(principal.getName());
    }
    return trustWithoutAuthentication && req.getCoreContainer().getAuthenticationPlugin() == null;
  }
}
