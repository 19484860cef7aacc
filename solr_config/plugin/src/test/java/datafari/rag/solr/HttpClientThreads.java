package datafari.rag.solr;

import com.carrotsearch.randomizedtesting.ThreadFilter;

/**
 * The JDK HTTP client langchain4j's models use keeps a selector thread until it is collected: not a
 * leak of the code under test.
 */
public class HttpClientThreads implements ThreadFilter {
  @Override
  public boolean reject(Thread t) {
    return t.getName().startsWith("HttpClient-");
  }
}
