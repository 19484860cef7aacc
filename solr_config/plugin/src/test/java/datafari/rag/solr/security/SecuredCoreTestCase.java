package datafari.rag.solr.security;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.apache.solr.SolrTestCaseJ4;
import org.apache.solr.common.util.Utils;
import org.apache.solr.request.LocalSolrQueryRequest;
import org.apache.solr.request.SolrQueryRequest;

/**
 * A core with the product's secured handlers (the test configset: the door, the security filter, a
 * handler without the door for the controls), and a request as a given Solr user sends it.
 */
abstract class SecuredCoreTestCase extends SolrTestCaseJ4 {
  static void initSecuredCore() throws Exception {
    Path home = Path.of(SecuredCoreTestCase.class.getResource("/solr").toURI());
    initCore("solrconfig.xml", "schema.xml", home.toString());
  }

  /** Solr's JSON answer of {@code handler} to {@code principal} (null: anonymous). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> search(String handler, String principal, String... params)
      throws Exception {
    String[] all = Arrays.copyOf(params, params.length + 2);
    all[params.length] = "wt";
    all[params.length + 1] = "json";
    SolrQueryRequest req = req(all);
    ((LocalSolrQueryRequest) req).setUserPrincipalName(principal);
    req.getContext().put("path", handler);
    try {
      return (Map<String, Object>) Utils.fromJSONString(h.query(handler, req));
    } finally {
      req.close();
    }
  }
}
