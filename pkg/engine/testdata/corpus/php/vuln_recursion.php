<?php
// Breadcrumb segments are joined recursively into the template path.
function join_segments(array $segments, int $i): string
{
    if ($i >= count($segments)) {
        return '';
    }
    return '/' . $segments[$i] . join_segments($segments, $i + 1);
}

$template = 'templates' . join_segments(explode(',', $_GET['trail']), 0) . '.php';
include $template; // vuln: php.path.file-access
