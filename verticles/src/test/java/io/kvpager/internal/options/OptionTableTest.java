package io.kvpager.internal.options;

import io.kvpager.Layout;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One table reads, writes and refuses an options class's JSON: each row once, through the class's setters. */
class OptionTableTest {

    /** A small options class in the shape of kvpager's: setters that check, one optional field. */
    static final class Sample {
        private String name = "x";
        private int size = 1;
        private Long limit;
        private Layout layout = Layout.PAGE_MAJOR;
        private List<Integer> stages = List.of();

        String getName() {
            return name;
        }

        void setName(String name) {
            this.name = OptionRules.instanceName("name", name);
        }

        int getSize() {
            return size;
        }

        void setSize(int size) {
            this.size = OptionRules.atLeast("size", size, 1);
        }

        Long getLimit() {
            return limit;
        }

        void setLimit(Long limit) {
            this.limit = limit == null ? null : OptionRules.atLeast("limit", limit, 0L);
        }

        Layout getLayout() {
            return layout;
        }

        void setLayout(Layout layout) {
            this.layout = layout;
        }

        List<Integer> getStages() {
            return stages;
        }

        void setStages(List<Integer> stages) {
            this.stages = List.copyOf(stages);
        }
    }

    private static final OptionType<Layout> LAYOUT = OptionType.STRING.as((field, text) -> {
        try {
            return Layout.valueOf(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + " must be PAGE_MAJOR or PER_LAYER, got '" + text + "'");
        }
    }, Layout::name);

    private static final OptionTable<Sample> TABLE = OptionTable.<Sample>of("sample option", OptionTable.MUST_NOT_BE_NULL)
            .add("name", OptionType.STRING, Sample::getName, Sample::setName)
            .add("size", OptionType.INT, Sample::getSize, Sample::setSize)
            .unsettable("limit", OptionType.LONG, Sample::getLimit, Sample::setLimit)
            .add("layout", LAYOUT, Sample::getLayout, Sample::setLayout)
            .add("stages", OptionType.INT_LIST, Sample::getStages, Sample::setStages);

    @Test
    void readsEveryKeyThroughItsSetterAndWritesThemBackInTheTablesOrder() {
        JsonObject json = new JsonObject().put("stages", List.of(0, 2)).put("layout", "PER_LAYER").put("limit", 7L)
                .put("size", 4).put("name", "llama");
        Sample sample = TABLE.read(new Sample(), json);
        assertThat(sample.getName()).isEqualTo("llama");
        assertThat(sample.getSize()).isEqualTo(4);
        assertThat(sample.getLimit()).isEqualTo(7L);
        assertThat(sample.getLayout()).isEqualTo(Layout.PER_LAYER);
        assertThat(sample.getStages()).containsExactly(0, 2);
        JsonObject written = TABLE.toJson(sample);
        assertThat(written.fieldNames()).containsExactly("name", "size", "limit", "layout", "stages");
        assertThat(TABLE.toJson(TABLE.read(new Sample(), written))).isEqualTo(written);
    }

    @Test
    void anUnsetOptionIsLeftOutAndNullUnsetsOnlyWhereTheRowSaysSo() {
        Sample sample = TABLE.read(new Sample(), new JsonObject().put("limit", 3L));
        TABLE.read(sample, new JsonObject().put("limit", null));
        assertThat(sample.getLimit()).isNull();
        assertThat(TABLE.toJson(sample).containsKey("limit")).isFalse();
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("size", null)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("size must not be null");
    }

    @Test
    void refusalsNameTheKey() {
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("sise", 2)))
                .hasMessage("unknown sample option 'sise'; known sample options: name, size, limit, layout, stages");
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("size", 1.5)))
                .hasMessage("size must be an integer, got 1.5 (Double)");
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("size", "4")))
                .hasMessage("size must be an integer, got \"4\" (String)");
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("size", 0)))
                .hasMessage("size must be >= 1, got 0");
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("layout", "ROWS")))
                .hasMessage("layout must be PAGE_MAJOR or PER_LAYER, got 'ROWS'");
        assertThatThrownBy(() -> TABLE.read(new Sample(), new JsonObject().put("stages", List.of(0, "1"))))
                .hasMessage("stages[1] must be an integer, got \"1\" (String)");
    }

    @Test
    void textFromTheEnvironmentIsParsedToTheRowsType() {
        assertThat(OptionType.INT_LIST.parse("[0, 2]", "stages", "KVPAGER_STAGES")).isEqualTo(new io.vertx.core.json.JsonArray(List.of(0, 2)));
        assertThat(OptionType.BOOL.parse("TRUE", "zeroPage", "KVPAGER_ZERO_PAGE")).isEqualTo(true);
        assertThat(LAYOUT.parse("PER_LAYER", "layout", "KVPAGER_LAYOUT")).isEqualTo("PER_LAYER");
        assertThatThrownBy(() -> OptionType.LONG.parse("soon", "limit", "kvpager.limit"))
                .hasMessage("kvpager.limit (option limit): 'soon' is not an integer");
    }

    @Test
    void aKeyIsInTheTableOnce() {
        assertThatThrownBy(() -> OptionTable.<Sample>of("sample option", OptionTable.MUST_NOT_BE_NULL)
                .add("size", OptionType.INT, Sample::getSize, Sample::setSize)
                .add("size", OptionType.INT, Sample::getSize, Sample::setSize))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("size");
    }
}
