/**
 * Deliberately violating classes: each breaks one rule of {@code SdkArchitectureRules}, so that
 * {@code ArchRulesCatchViolationsTest} can show the rule failing. Test sources only; the
 * production import never sees them.
 */
package io.flinkdevices.sdk.archviolation;
