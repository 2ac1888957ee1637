package ruby

import (
	"testing"

	"github.com/vulnscan/vulnscan/pkg/engine/lower/lowertest"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
	"github.com/vulnscan/vulnscan/pkg/engine/syntax"
)

// lowerSrc parses and lowers one snippet.
func lowerSrc(t testing.TB, path, src string) *ir.File {
	t.Helper()
	return lowertest.Lower(t, syntax.Ruby, Lower, path, []byte(src))
}

// TestLowerGolden compares the IR of one snippet per construct with
// testdata/golden/<name>.ir (go test -run TestLowerGolden -update rewrites them).
func TestLowerGolden(t *testing.T) {
	cases := []struct{ name, src string }{
		{"class_nesting", "module Shop\n  class Base; end\n  class Order < Base\n    include Comparable\n    extend Forwardable\n    def total; end\n  end\nend\nclass Other < ActiveRecord::Base; end\n"},
		{"methods_self", "class Cart\n  def initialize(items)\n    @items = items\n  end\n  def self.build(x) = new(x)\n  def first\n    self.items.first\n  end\nend\n"},
		{"ivars_globals_consts", "class Conf\n  LIMIT = 10\n  @@count = 0\n  def bump\n    @@count += 1\n    $last = @value\n    @value = LIMIT\n  end\nend\n"},
		{"attr_accessor", "class User\n  attr_accessor :name\n  attr_reader :id\n  def show\n    name\n  end\nend\n"},
		{"visibility", "class C\n  def act; end\n  private\n  def helper; end\n  public\n  def other; end\n  private :other\nend\n"},
		{"new_resolution", "module Billing\n  class Invoice; end\n  def self.make\n    Invoice.new(1)\n  end\nend\nString.new(\"x\")\n"},
		{"blocks", "def run(items)\n  prefix = \"x\"\n  items.each do |i|\n    puts prefix + i\n  end\n  items.map { |i| i.upcase }\nend\n"},
		{"lambda_proc", "def go(cmd)\n  f = ->(a) { system(cmd + a) }\n  g = lambda { |b| b }\n  f.call(\"1\")\n  g.(2)\nend\n"},
		{"yield", "def each_line\n  yield \"a\", 1\nend\ndef with_block(&blk)\n  blk.call(1)\nend\n"},
		{"if_unless", "def f(a)\n  if a > 1 then 1 elsif a < 0 then 2 else 3 end\nend\ndef g(a)\n  return 0 unless a\n  a\nend\n"},
		{"modifiers_ternary", "def f(a)\n  x = 1 if a\n  y = a ? x : 2\n  y\nend\n"},
		{"case_when", "def f(v)\n  case v\n  when \"a\", :b then 1\n  when 1..3, String then 2\n  else 3\n  end\nend\n"},
		{"case_in", "def f(v)\n  case v\n  in 1 | 2 then :small\n  in {name: String => n} then n\n  in [x, *] if x then x\n  end\nend\n"},
		{"loops", "def f(n)\n  i = 0\n  while i < n do i += 1 end\n  until n; n = 1; end\n  for a, b in pairs do puts a end\n  loop do\n    break if i\n    next\n  end\nend\n"},
		{"begin_rescue", "def f\n  begin\n    risky\n  rescue IOError, SystemCallError => e\n    retry\n  rescue => e2\n    raise ArgumentError, \"bad #{e2}\"\n  else\n    ok\n  ensure\n    done\n  end\nend\n"},
		{"method_rescue_modifier", "def f\n  work\nrescue StandardError\n  nil\nend\nx = Integer(s) rescue 0\n"},
		{"jumps_in_blocks", "def f(list)\n  list.each do |x|\n    next if x\n    break\n  end\n  return 1, 2\nend\n"},
		{"logic", "def f(a, b)\n  t = a && b\n  u = a || compute(b)\n  v = !a\n  w = (not b)\n  a and run\nend\n"},
		{"strings", "def f(name)\n  s = \"Hi #{name}!\\n\"\n  q = <<~SQL\n    SELECT * FROM t WHERE n = '#{name}'\n  SQL\n  r = /^#{name}$/i\n  sym = :\"k#{name}\"\n  c = 'plain' 'chained'\nend\n"},
		{"symbols_collections", "def f(x)\n  a = [1, *x, :two]\n  h = { \"k\" => x, sym: 1, :old => 2, **x }\n  w = %w[a b]\n  r = (1..x)\n  h[:sym]\nend\n"},
		{"index_assign", "def f(h, v)\n  h[:k] = v\n  cookies[:token] = v\n  session[:user] = v\n  h[:n] ||= 1\n  h[:c] += 1\nend\n"},
		{"multi_assign", "def f(pair)\n  a, b = 1, 2\n  c, *d = pair\n  e, (f, g) = pair\nend\n"},
		{"op_assign", "class C\n  def f(v)\n    x ||= v\n    x += 1\n    self.count += 1\n    @list <<= v\n  end\nend\n"},
		{"safe_nav_kwargs", "def f(user)\n  user&.update(name: \"x\", \"role\" => 1)\n  render json: user, status: 200\n  go(*args, **opts, &blk)\nend\n"},
		{"calls", "class Ctl < ApplicationController\n  before_action :load\n  def show\n    id = params[:id]\n    User.find(id)\n    Foo::Bar.baz(id)\n    ENV.fetch(\"HOME\")\n    helper\n  end\nend\n"},
		{"backticks", "def f(h)\n  `ping #{h}`\n  %x(ls #{h})\nend\n"},
		{"super_calls", "class A < B\n  def initialize(x)\n    super(x)\n  end\n  def run(y)\n    super\n  end\nend\n"},
		{"class_self_singleton", "class A\n  class << self\n    def make; new; end\n  end\nend\nmodule U\n  module_function\n  def h(x) = x\nend\n"},
		{"require", "require \"json\"\nrequire_relative \"../lib/helper\"\nHelper.run\n"},
		{"route_helpers", "class C < ApplicationController\n  def go\n    redirect_to order_path(id: params[:id])\n    custom_path(1)\n  end\n  def custom_path(x) = x\nend\n"},
		{"iterators", "def f(list)\n  list.each_with_index { |x, i| puts x }\n  list.select { |x| x }\n  list.map(&:to_s)\nend\n"},
		{"heredocs", "a = <<~TXT\n    one\n      two\n  TXT\nb = <<-EOS\n  keep\n  EOS\nc = <<EOS\nraw\nEOS\n"},
		{"default_params", "def f(a, b = compute(a), key: 1, &blk)\n  b\nend\n"},
		{"define_method", "class A\n  define_method(:hello) do |x|\n    x\n  end\nend\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lowertest.Golden(t, tc.name, lowerSrc(t, "app/"+tc.name+".rb", tc.src))
		})
	}
}

// TestLowerFacts checks the conventions that other packages rely on.
func TestLowerFacts(t *testing.T) {
	f := lowerSrc(t, "app/controllers/a.rb", "module Admin\n  class UsersController < ApplicationController\n    attr_accessor :cache\n    def index\n      @q = params[:q]\n    end\n    def self.build; end\n    private\n    def helper; end\n  end\nend\n")
	require.Len(t, f.Classes, 2)
	c := f.Classes[1]
	require.Equal(t, "Admin::UsersController", c.QName)
	require.Equal(t, []string{"ApplicationController"}, c.Super)
	require.Equal(t, "cache", c.Fields[0].Name)
	byName := map[string]*ir.Func{}
	for _, fn := range c.Methods {
		byName[fn.Name] = fn
	}
	require.Equal(t, "Admin::UsersController#index", byName["index"].QName)
	require.NotEqual(t, ir.NoVar, byName["index"].This)
	require.Equal(t, "Admin::UsersController", byName["index"].Vars[byName["index"].This].Type)
	require.True(t, byName["build"].Static)
	require.Equal(t, ir.NoVar, byName["build"].This)
	require.Equal(t, "private", byName["helper"].Annotations[0].Name)
	require.Empty(t, byName["index"].Annotations)
	var call *ir.Call
	for _, blk := range byName["index"].Blocks {
		for _, in := range blk.Instrs {
			if in.Op == ir.OpCall && call == nil {
				call = in.Call
			}
		}
	}
	require.Equal(t, ir.CallFunc, call.Kind)
	require.Equal(t, "params", call.Name)
	require.Equal(t, "", call.Qual)
}

// TestLowerRejectsOtherTrees checks the error for a foreign tree.
func TestLowerRejectsOtherTrees(t *testing.T) {
	_, err := Lower("x.rb", nil, &syntax.Node{Type: "module"})
	require.ErrorIs(t, err, ErrNotRuby)
	_, err = Lower("x.rb", nil, nil)
	require.ErrorIs(t, err, ErrNotRuby)
}

// corpusFiles returns every Ruby file of the labelled corpus.
func corpusFiles(t testing.TB) []string { return lowertest.CorpusFiles(t, "ruby") }

// TestLowerCorpus lowers every Ruby file of the corpus into valid IR.
func TestLowerCorpus(t *testing.T) {
	lowertest.LowerCorpus(t, "ruby", syntax.Ruby, Lower)
}
