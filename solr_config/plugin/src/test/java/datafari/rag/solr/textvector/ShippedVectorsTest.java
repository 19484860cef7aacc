package datafari.rag.solr.textvector;

import org.apache.solr.SolrTestCase;
import org.apache.solr.common.SolrException;
import org.junit.Test;

/**
 * A query vector sent to the shards reads back to the same floats, only for the text it was made
 * for; a malformed one is the client's error.
 */
public class ShippedVectorsTest extends SolrTestCase {
  private static final float[] VECTOR = {0.1f, -0.000012345678f, 3.4028235e38f, -1f};

  @Test
  public void testTheVectorReadsBackExactlyForItsOwnText() {
    String[] sent = {
      ShippedVectors.encode("fire drill", new float[] {1f, 2f, 3f, 4f}),
      ShippedVectors.encode("pump maintenance", VECTOR)
    };
    assertArrayEquals(VECTOR, ShippedVectors.find(sent, "pump maintenance", 4), 0f);
    assertNull(ShippedVectors.find(sent, "pump maintenance!", 4));
    assertNull(ShippedVectors.find(null, "pump maintenance", 4));
  }

  @Test
  public void testAMalformedVectorIsRefused() {
    String key = ShippedVectors.key("q");
    for (String bad :
        new String[] {key + ":1,2,3", key + ":1,2,x,4", key + ":1,2,NaN,4", key + ":"}) {
      SolrException refused =
          expectThrows(SolrException.class, () -> ShippedVectors.find(new String[] {bad}, "q", 4));
      assertEquals(400, refused.code());
      assertTrue(refused.getMessage(), refused.getMessage().contains("'queryVector'"));
    }
  }
}
