package io.flinkdevices.cli.render;

/**
 * One file of the Hadoop configuration that {@code render yarn} produces.
 *
 * @param name the file's name in a Hadoop configuration directory ({@code resource-types.xml})
 * @param where which daemons read it and how to apply it, for the operator
 * @param xml its content
 */
public record HadoopFile(String name, String where, String xml) {}
