package io.kvpager.protocol;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** The answer to {@code views}: one {@link TensorView} per (layer, buffer), layer by layer. */
public record ViewsReply(List<TensorView> views) {

    public static final String VIEWS = "views";

    public ViewsReply {
        views = List.copyOf(views);
    }

    public JsonObject toJson() {
        JsonArray array = new JsonArray(new ArrayList<>(views.size()));
        for (TensorView view : views) {
            array.add(view.toJson());
        }
        return new JsonObject().put(VIEWS, array);
    }

    public static ViewsReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(VIEWS);
        List<TensorView> views = new ArrayList<>();
        for (RequestBody view : body.requireObjects(VIEWS)) {
            views.add(TensorView.read(view));
        }
        return new ViewsReply(views);
    }
}
