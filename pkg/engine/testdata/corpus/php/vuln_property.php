<?php
// A download object keeps the requested name in a property and later reads
// the file it names.
class Download
{
    private $path;
    private $label = 'report';

    public function __construct($name)
    {
        $this->path = '/srv/reports/' . $name;
    }

    public function send()
    {
        header('Content-Disposition: attachment; filename="' . $this->label . '.pdf"');
        readfile($this->path); // vuln: php.path.file-access
    }
}

$d = new Download($_GET['file']);
$d->send();
