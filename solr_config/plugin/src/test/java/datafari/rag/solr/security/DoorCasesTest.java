package datafari.rag.solr.security;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.solr.common.SolrException;
import org.apache.solr.common.util.Utils;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The door's rule as the shared table of cases ({@code solr_config/door_cases.json}, also run by
 * the sidecar's tests): each case is accepted or refused as the table says, from a direct client
 * and handed over by the service account as a user's ({@code client.<name>}) alike.
 */
public class DoorCasesTest extends SecuredCoreTestCase {
  @BeforeClass
  public static void beforeClass() throws Exception {
    initSecuredCore();
    assertU(
        adoc("id", "pub", "title", "Pumps", "content", "the pump and the valve", "language", "en"));
    assertU(commit());
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> cases() throws Exception {
    try (InputStream in = DoorCasesTest.class.getResourceAsStream("door_cases.json")) {
      assertNotNull("door_cases.json is copied beside this class at build", in);
      return (List<Map<String, Object>>) ((Map<String, Object>) Utils.fromJSON(in)).get("cases");
    }
  }

  /**
   * Runs one request on the secured /select; true if Solr answered, false if it refused with 400.
   */
  private static boolean accepted(String principal, List<String> params) throws Exception {
    try {
      search("/select", principal, params.toArray(new String[0]));
      return true;
    } catch (SolrException e) {
      assertEquals(String.join(" ", params) + ": " + e.getMessage(), 400, e.code());
      return false;
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  public void eachCaseIsJudgedAsTheTableSaysForADirectClientAndAHandedOverUser() throws Exception {
    List<Map<String, Object>> cases = cases();
    assertTrue(cases.size() > 30);
    for (Map<String, Object> one : cases) {
      List<List<String>> pairs = (List<List<String>>) one.get("params");
      boolean expected = (Boolean) one.get("accepted");
      List<String> direct = new ArrayList<>();
      List<String> handed = new ArrayList<>(List.of("AuthenticatedUserName", "bob"));
      if (pairs.stream().noneMatch(p -> p.get(0).equals("q"))) {
        direct.addAll(List.of("q", "*:*"));
        handed.addAll(List.of("q", "*:*"));
      }
      for (List<String> pair : pairs) {
        direct.addAll(pair);
        handed.addAll(List.of(SecureSearchComponent.CLIENT + pair.get(0), pair.get(1)));
      }
      String label = one.get("why") + ": " + direct;
      assertEquals("anonymous, " + label, expected, accepted(null, direct));
      assertEquals("handed over, " + label, expected, accepted("datafari-rag", handed));
    }
  }
}
