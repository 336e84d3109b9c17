// Package csvsafe writes CSV that a spreadsheet opens as data. Excel,
// LibreOffice Calc and Google Sheets evaluate a cell whose text starts with
// "=", "+", "-" or "@" as a formula, and also one starting with a tab or a
// carriage return; a formula can fetch URLs or, through DDE, run programs
// (OWASP, "CSV Injection"). Text that dmlbench copies from its input into a
// CSV cell (a class label, a method or data set name) therefore gets a
// leading "'", which the spreadsheets take as "this cell is text" and do
// not show. A decimal number ("-0.5", "+3", "-1e-05") is data, not a
// formula, and is written as it is; so is every other cell.
package csvsafe
