package io.kvpager.protocol;

import io.vertx.core.eventbus.DeliveryOptions;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * An action a kvpager endpoint answers, named in the {@code action} header of each request: a
 * rank worker's ({@link WorkerAction}) or a coordinator's ({@link CoordinatorAction}). The name on
 * the wire is the constant's, in lower case with {@code -} for {@code _}: {@code CREATE_TENSORS}
 * travels as {@code create-tensors}.
 */
public sealed interface BusAction permits WorkerAction, CoordinatorAction {

    /** The message header that names the action, the same for a worker and a coordinator. */
    String HEADER = WorkerProtocol.ACTION_HEADER;

    /** The constant's name ({@link Enum#name()}), from which the wire name is made. */
    String name();

    /** The name in the {@code action} header, e.g. {@code create-tensors}. */
    default String wireName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** New delivery options that carry this action in the {@code action} header. */
    default DeliveryOptions delivery() {
        return new DeliveryOptions().addHeader(HEADER, wireName());
    }

    /** Every action of {@code type} by its wire name, in declaration order. */
    static <A extends Enum<A> & BusAction> List<String> wireNames(Class<A> type) {
        return Arrays.stream(type.getEnumConstants()).map(BusAction::wireName).toList();
    }

    /**
     * The action of {@code type} named {@code name}.
     *
     * @throws IllegalArgumentException for a missing or unknown name, listing the known ones (an
     *     unknown name quoted cut to {@link WireText#MOST} characters: it came from the bus)
     */
    static <A extends Enum<A> & BusAction> A named(Class<A> type, String name) {
        for (A action : type.getEnumConstants()) {
            if (action.wireName().equals(name)) {
                return action;
            }
        }
        String known = "; actions: " + String.join(", ", wireNames(type));
        throw new IllegalArgumentException(name == null ? "the '" + HEADER + "' header is missing" + known
                : "unknown action '" + WireText.cut(name) + "'" + known);
    }
}
