package datafari.rag.solr.security;

import java.util.List;
import java.util.Set;
import org.apache.solr.SolrTestCase;
import org.apache.solr.common.SolrException;
import org.junit.Test;

/** ManifoldCF's authority replies, read as the plugin reads them: anything untrusted refuses. */
public class ManifoldCFSecurityRuleTest extends SolrTestCase {

  @Test
  public void tokensComeFromTokenLinesAfterAStatus() {
    assertEquals(
        Set.of("hr", "DOM\\grp:\"x\""),
        UserTokens.parse("AUTHORIZED:ad\nTOKEN:hr\nTOKEN:DOM\\grp:\"x\"\nID:alice\n"));
    assertEquals(Set.of(), UserTokens.parse("USERNOTFOUND:ad\n"));
  }

  @Test
  public void anUntrustedReplyRefusesTheSearch() {
    for (String reply :
        List.of(
            "",
            "TOKEN:hr\n",
            "AUTHORIZED:ad\nTOKEN:\n",
            "UNREACHABLEAUTHORITY:ad\n",
            "AUTHORIZED:a\nhello\n")) {
      SolrException refused = expectThrows(SolrException.class, () -> UserTokens.parse(reply));
      assertEquals(reply, 503, refused.code());
    }
  }

  @Test
  public void noTokenMeansPublicDocumentsOnly() {
    String anonymous = ManifoldCFSecurityQParserPlugin.filter(Set.of()).toString();
    assertFalse(anonymous, anonymous.contains("deny_token_document:hr"));
    String alice =
        ManifoldCFSecurityQParserPlugin.filter(Set.of("hr", "", "__nosecurity__")).toString();
    assertTrue(alice, alice.contains("hr"));
    assertFalse(alice, alice.contains("allow_token_document:()"));
  }
}
