<?php
// safe: php.path.file-access
// The requested name only sets the label; the path property is reduced to
// a base name.
class Download
{
    private $path;
    private $label;

    public function __construct($name)
    {
        $this->label = $name;
        $this->path = '/srv/reports/' . basename($name);
    }

    public function send()
    {
        readfile($this->path);
        readfile('/srv/reports/cover.pdf');
    }
}

$d = new Download($_GET['file']);
$d->send();
