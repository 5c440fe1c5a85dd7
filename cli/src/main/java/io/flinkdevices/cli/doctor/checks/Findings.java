package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;

import java.util.ArrayList;
import java.util.List;

/** Where checks put what they find: findings (something to fix) and notes (something to know). */
public final class Findings {

    private final List<Finding> findings = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    /** Adds a problem with its fix. */
    public void add(Finding finding) {
        findings.add(finding);
    }

    /** Adds a note: nothing to fix, but what an operator should know. */
    public void note(String note) {
        notes.add(note);
    }

    /** The findings so far, in the order found. */
    public List<Finding> findings() {
        return List.copyOf(findings);
    }

    /** The notes so far, in the order found. */
    public List<String> notes() {
        return List.copyOf(notes);
    }
}
