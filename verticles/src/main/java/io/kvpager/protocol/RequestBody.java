package io.kvpager.protocol;

import io.kvpager.internal.options.OptionReader;
import io.kvpager.internal.options.OptionRules;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * Typed, strict reads of a request or reply body. {@link JsonObject}'s own getters truncate a long into an
 * int and read {@code 1.5} as {@code 1}; a worker must refuse such a request instead, before it
 * touches any mapping. Every refusal is an {@link IllegalArgumentException} (a 400) naming the
 * field and what it held, in the words of {@link OptionRules}, the rules every kvpager option follows.
 */
public final class RequestBody {

    /** The longest owner taken: a node id of 128 characters, '#', and an epoch of 19 digits. */
    static final int MAX_OWNER = 148;

    private final JsonObject json;
    /** How the fields are named in refusals: empty at the top, {@code "handlePool."} inside that object. */
    private final String path;

    public RequestBody(JsonObject json) {
        this(json, "");
    }

    private RequestBody(JsonObject json, String path) {
        this.json = json;
        this.path = path;
    }

    public JsonObject json() {
        return json;
    }

    /** A required integer field within {@code [min, max]}. */
    public int requireInt(String name, int min, int max) {
        long value = requireLong(name, min, max);
        return (int) value;
    }

    /** A required integer field within {@code [min, max]}. */
    public long requireLong(String name, long min, long max) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        return OptionRules.inRange(path + name, OptionReader.longValue(path + name, value), min, max);
    }

    /** An optional integer field within {@code [min, max]}; {@code absent} when it is missing or null. */
    public int optionalInt(String name, int min, int max, int absent) {
        return json.getValue(name) == null ? absent : requireInt(name, min, max);
    }

    /** An optional integer field within {@code [min, max]}; {@code absent} when it is missing or null. */
    public long optionalLong(String name, long min, long max, long absent) {
        return json.getValue(name) == null ? absent : requireLong(name, min, max);
    }

    /**
     * An optional object field, read with the same strictness; its refusals name the field as
     * {@code name.field}. Null when it is missing or null.
     */
    public RequestBody optionalObject(String name) {
        Object value = json.getValue(name);
        if (value == null) {
            return null;
        }
        if (!(value instanceof JsonObject object)) {
            throw OptionRules.typeError(path + name, "an object", value);
        }
        return new RequestBody(object, path + name + ".");
    }

    /**
     * Refuses a field other than {@code known}, so that a misspelt option is an error instead of
     * a silent default.
     */
    public void requireOnly(String... known) {
        for (String field : json.fieldNames()) {
            if (!List.of(known).contains(field)) {
                throw new IllegalArgumentException(path + field + " is not a known field; expected "
                        + String.join(" or ", Arrays.stream(known).map(k -> path + k).toList()));
            }
        }
    }

    /** A required non-empty string field. */
    String requireString(String name) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        if (!(value instanceof String s) || s.isEmpty()) {
            throw OptionRules.typeError(path + name, "a non-empty string", value);
        }
        return s;
    }

    /** A required non-empty string field of at most {@code maxLength} characters. */
    public String requireId(String name, int maxLength) {
        String id = requireString(name);
        if (id.length() > maxLength) {
            throw new IllegalArgumentException(path + name + " is " + id.length() + " characters long; at most " + maxLength
                    + " are taken");
        }
        return id;
    }

    /**
     * A required owner in its string form {@code <nodeId>#<epoch>}, exactly as {@link Owner#toString()}
     * writes it: no sign, no leading zeros, nothing around it.
     */
    public Owner requireOwner(String name) {
        String text = requireId(name, MAX_OWNER);
        Owner owner;
        try {
            owner = Owner.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(path + name + ": " + e.getMessage());
        }
        if (!owner.toString().equals(text)) {
            throw new IllegalArgumentException(path + name + " must be written " + owner + ", got " + text);
        }
        return owner;
    }

    /** An optional owner, read as {@link #requireOwner}; null when it is missing or null. */
    public Owner optionalOwner(String name) {
        return json.getValue(name) == null ? null : requireOwner(name);
    }

    /** An optional boolean field. */
    public boolean optionalBoolean(String name, boolean absent) {
        Object value = json.getValue(name);
        return value == null ? absent : OptionReader.bool(path + name, value);
    }

    /** A required enum field, by the constant's name. */
    public <E extends Enum<E>> E requireEnum(String name, Class<E> type) {
        String value = requireString(name);
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equals(value)) {
                return constant;
            }
        }
        StringBuilder known = new StringBuilder();
        for (E constant : type.getEnumConstants()) {
            known.append(known.isEmpty() ? "" : " or ").append('"').append(constant.name()).append('"');
        }
        throw new IllegalArgumentException(path + name + " must be " + known + ", got \"" + value + "\"");
    }

    /**
     * A required array of distinct page ids, each in {@code [0, pages)}. The array's length is
     * checked first, so an oversized array is refused before any element is read.
     */
    public int[] requirePageIds(String name, int pages) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        if (!(value instanceof JsonArray array)) {
            throw OptionRules.typeError(path + name, "an array of page ids", value);
        }
        if (array.size() > pages) {
            throw new IllegalArgumentException(path + name + " names " + array.size() + " page ids but the group has only " + pages);
        }
        int[] ids = new int[array.size()];
        BitSet seen = new BitSet(pages);
        for (int i = 0; i < ids.length; i++) {
            Object element = array.getValue(i);
            if (element == null) {
                throw new IllegalArgumentException(path + name + "[" + i + "] is null; page ids are integers");
            }
            long id = OptionReader.longValue(path + name + "[" + i + "]", element);
            if (id < 0 || id >= pages) {
                throw new IllegalArgumentException(path + name + "[" + i + "] = " + id + " is out of range; the group has pages 0.." + (pages - 1));
            }
            if (seen.get((int) id)) {
                throw new IllegalArgumentException(path + name + "[" + i + "] = " + id + " appears twice in one request");
            }
            seen.set((int) id);
            ids[i] = (int) id;
        }
        return ids;
    }

    /** A required boolean field. */
    public boolean requireBoolean(String name) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        return OptionReader.bool(path + name, value);
    }

    /** A required string field, which may be empty. */
    public String requireText(String name) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        return OptionReader.string(path + name, value);
    }

    /** An optional non-empty string field; null when it is missing or null. */
    public String optionalString(String name) {
        return json.getValue(name) == null ? null : requireString(name);
    }

    /** A required object field, read with the same strictness; its refusals name the field as {@code name.field}. */
    public RequestBody requireObject(String name) {
        if (json.getValue(name) == null) {
            throw OptionRules.required(path + name);
        }
        return optionalObject(name);
    }

    /** A required array of objects, each read with the same strictness as {@code name[i].field}. */
    public List<RequestBody> requireObjects(String name) {
        JsonArray array = requireArray(name, "an array of objects");
        List<RequestBody> objects = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            if (!(array.getValue(i) instanceof JsonObject object)) {
                throw OptionRules.typeError(path + name + "[" + i + "]", "an object", array.getValue(i));
            }
            objects.add(new RequestBody(object, path + name + "[" + i + "]."));
        }
        return objects;
    }

    /** A required array of integers, each within {@code [min, max]}. */
    public int[] requireInts(String name, int min, int max) {
        JsonArray array = requireArray(name, "an array of integers");
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) {
            String field = path + name + "[" + i + "]";
            Object element = array.getValue(i);
            if (element == null) {
                throw OptionRules.typeError(field, "an integer", null);
            }
            values[i] = (int) OptionRules.inRange(field, OptionReader.longValue(field, element), min, max);
        }
        return values;
    }

    private JsonArray requireArray(String name, String what) {
        Object value = json.getValue(name);
        if (value == null) {
            throw OptionRules.required(path + name);
        }
        if (!(value instanceof JsonArray array)) {
            throw OptionRules.typeError(path + name, what, value);
        }
        return array;
    }
}
