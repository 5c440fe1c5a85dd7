package io.flinkdevices.sdk.internal;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * The operating system's words for a failed file access ({@code Not a directory}, {@code
 * Permission denied}), which every message about a file of the host ends with. Shared by the
 * parameter checks ({@code sdk.config}) and the host readers ({@code sdk.host}), so that neither
 * room reaches into the other for it.
 */
public final class OsReason {

    private OsReason() {}

    /** The reason the operating system gave for {@code e}, else the exception's own words. */
    public static String of(IOException e) {
        if (e instanceof FileSystemException) {
            FileSystemException f = (FileSystemException) e;
            if (f.getReason() != null) {
                return f.getReason();
            }
            if (e instanceof NoSuchFileException) {
                return "No such file or directory";
            }
            if (e instanceof AccessDeniedException) {
                return "Permission denied";
            }
            if (e instanceof NotDirectoryException) {
                return "Not a directory";
            }
        }
        return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }
}
