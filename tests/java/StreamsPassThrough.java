// A minimal Kafka Streams application on the streams group protocol (KIP-1071), for
// tests/test_groups_streams.py: upper-cases the values of one topic into another for a while.
// Arguments: BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR RUN_MS
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;

public class StreamsPassThrough {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put("group.protocol", "streams");
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(args[2]).mapValues(v -> v.toUpperCase()).to(args[3]);
        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        Runtime.getRuntime().addShutdownHook(new Thread(streams::close));
        streams.start();
        Thread.sleep(Long.parseLong(args[5]));
        streams.close();
    }
}
