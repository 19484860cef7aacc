import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

/**
 * Starts a real Solr HTTP server (Jetty + SolrDispatchFilter, context /solr, bound to 127.0.0.1)
 * from a solr home, as the project's local runtime. Run as a single-file source program:
 * java -cp 'lib/*' Launcher.java SOLR_HOME PORT
 */
public class Launcher {
  public static void main(String[] args) throws Exception {
    String home = args[0];
    int port = Integer.parseInt(args[1]);
    JettyConfig config = JettyConfig.builder().setPort(port).setContext("/solr").build();
    JettySolrRunner solr = new JettySolrRunner(home, config);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    solr.stop();
                  } catch (Exception e) {
                    e.printStackTrace();
                  }
                }));
    solr.start();
    System.out.println("Solr " + org.apache.solr.client.api.util.SolrVersion.LATEST + " listening on " + solr.getBaseUrl());
    Thread.currentThread().join();
  }
}
