<?php
// The theme falls back to the requested name when loading the settings
// fails, so the include on the exception path uses request data.
function load_settings($file)
{
    if (!is_readable($file)) {
        throw new RuntimeException('settings missing');
    }
    return parse_ini_file($file);
}

$theme = $_GET['theme'];
try {
    $settings = load_settings('/etc/app/theme.ini');
    $theme = 'default';
} catch (RuntimeException $e) {
    error_log($e->getMessage());
}
include 'themes/' . $theme . '/header.php'; // vuln: php.path.file-access
