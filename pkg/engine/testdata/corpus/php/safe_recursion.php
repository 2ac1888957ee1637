<?php
// safe: php.path.file-access
// Each segment is reduced to a base name before it is joined.
function join_segments(array $segments, int $i): string
{
    if ($i >= count($segments)) {
        return '';
    }
    return '/' . basename($segments[$i]) . join_segments($segments, $i + 1);
}

$template = 'templates' . join_segments(explode(',', $_GET['trail']), 0) . '.php';
include $template;
