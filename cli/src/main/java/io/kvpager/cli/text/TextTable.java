package io.kvpager.cli.text;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table for terminals and logs: a header, rows, columns padded to their widest cell,
 * text left-aligned and numbers right-aligned.
 */
public final class TextTable {

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    public TextTable(String... header) {
        if (header.length == 0) {
            throw new IllegalArgumentException("a table needs at least one column");
        }
        this.header = List.of(header);
    }

    /** Adds a row; cells are turned into text with {@link String#valueOf(Object)}. */
    public TextTable row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("a row of " + cells.length + " cells in a table of " + header.size() + " columns");
        }
        List<String> row = new ArrayList<>(cells.length);
        for (Object cell : cells) {
            row.add(String.valueOf(cell));
        }
        rows.add(row);
        return this;
    }

    public int rows() {
        return rows.size();
    }

    /** The table, one line per row after the header and a rule, each line ending with a newline. */
    public String render() {
        int[] width = new int[header.size()];
        boolean[] numeric = new boolean[header.size()];
        for (int c = 0; c < width.length; c++) {
            width[c] = header.get(c).length();
            numeric[c] = !rows.isEmpty();
            for (List<String> row : rows) {
                width[c] = Math.max(width[c], row.get(c).length());
                numeric[c] &= looksNumeric(row.get(c));
            }
        }
        StringBuilder out = new StringBuilder();
        line(out, header, width, numeric);
        for (int c = 0; c < width.length; c++) {
            out.append(c == 0 ? "" : "  ").append("-".repeat(width[c]));
        }
        out.append('\n');
        for (List<String> row : rows) {
            line(out, row, width, numeric);
        }
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] width, boolean[] numeric) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < width.length; c++) {
            String cell = cells.get(c);
            String pad = " ".repeat(width[c] - cell.length());
            line.append(c == 0 ? "" : "  ").append(numeric[c] ? pad + cell : cell + pad);
        }
        out.append(line.toString().stripTrailing()).append('\n');
    }

    private static boolean looksNumeric(String cell) {
        return cell.isEmpty() || cell.equals("-") || cell.matches("[-+]?[\\d.,]+\\s*(%|[KMGT]?i?B|µs|s)?");
    }
}
