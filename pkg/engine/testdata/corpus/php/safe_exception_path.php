<?php
// safe: php.path.file-access
// The theme is reduced to a base name on both the normal and the exception
// path.
function load_settings($file)
{
    if (!is_readable($file)) {
        throw new RuntimeException('settings missing');
    }
    return parse_ini_file($file);
}

$theme = basename($_GET['theme']);
try {
    $settings = load_settings('/etc/app/theme.ini');
    $theme = 'default';
} catch (RuntimeException $e) {
    error_log($e->getMessage());
} finally {
    $theme = basename($theme);
}
include 'themes/' . $theme . '/header.php';
